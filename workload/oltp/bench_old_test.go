package oltp

func newBenchThread(s *runState) *thread {
	return &thread{counts: &Counts{}, trx: s.rec.TwinHandle(trxOp, uncorrOp)}
}
