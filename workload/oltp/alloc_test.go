package oltp

import (
	"runtime"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// TestRunAllocatesNothing: the run phase's clients, statements, answers
// and recording included, allocate nothing per transaction. Two runs that
// differ only in --events differ in allocations by their set-up's noise,
// not by the extra transactions. Also with --mysql-compression, whose
// framing reuses each connection's zlib state and buffers.
func TestRunAllocatesNothing(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "compressed"}[compress], func(t *testing.T) { testRunAllocatesNothing(t, compress) })
	}
}

func testRunAllocatesNothing(t *testing.T, compress bool) {
	s := testSpec(t, "wp_loop_alloc", 2, 1000)
	s.RandType, s.Threads, s.MysqlCompression = 1, u32p(4), compress
	o := prepared(t, s)
	mallocs := func(events uint64) uint64 {
		o := o
		// The once-a-second status sample allocates by the second, not
		// by the transaction: a loaded machine's longer run would count it.
		o.Events, o.Time, o.NoStatus = events, 0, true
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		sum, _, err := runFor(t, t.Context(), o)
		runtime.ReadMemStats(&after)
		if err != nil || sum.Transactions != int64(events) {
			t.Fatalf("run of %d events: %v, %d transactions", events, err, sum.Transactions)
		}
		return after.Mallocs - before.Mallocs
	}
	mallocs(100) // warm up: pools, the runtime's own first-use allocations
	small, large := mallocs(200), mallocs(3200)
	per := (float64(large) - float64(small)) / 3000
	t.Logf("run of 200 events: %d allocations; of 3,200: %d; %.3f per transaction", small, large, per)
	if per > 0.05 {
		t.Errorf("%.3f allocations per transaction; want none", per)
	}
}

// BenchmarkRecordTransaction: the run phase's booking of one transaction
// (latency into the Recorder and the summary's statistics, counters), in
// --rate mode (both latencies) after the warm-up.
func BenchmarkRecordTransaction(b *testing.B) {
	rec := workload.NewRecorder(time.Unix(0, 0))
	o := Options{Threads: 1, Rate: 10}
	s := &runState{o: o, rec: rec, start: time.Unix(0, 0)}
	s.total = counters{trx: rec.Counter("transactions"), writes: rec.Counter("writes"), other: rec.Counter("other"),
		errors: rec.Counter("errors"), reconnects: rec.Counter("reconnects"), late: rec.Counter("late")}
	t := newBenchThread(s)
	intended := time.Unix(1, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t.counts.Transactions.Add(1)
		t.counts.Writes.Add(4)
		began := intended.Add(time.Duration(i&1023) * time.Microsecond)
		s.record(t, intended, began, began.Add(time.Duration(200+i&0xffff)*time.Microsecond))
	}
}
