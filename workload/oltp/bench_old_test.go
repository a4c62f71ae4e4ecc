package oltp

func newBenchThread(s *runState) *thread {
	return &thread{counts: &Counts{}, st: newThreadStats(), trx: s.rec.Handle("trx"), uncorr: s.rec.Handle("trx_uncorrected")}
}
