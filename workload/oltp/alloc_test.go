package oltp

import (
	"runtime"
	"testing"
)

// TestRunAllocatesNothing: the run phase's clients, statements, answers
// and recording included, allocate nothing per transaction. Two runs that
// differ only in --events differ in allocations by their set-up's noise,
// not by the extra transactions.
func TestRunAllocatesNothing(t *testing.T) {
	s := testSpec("wp_loop_alloc", 2, 1000)
	s.RandType, s.Threads = 1, u32p(4)
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
