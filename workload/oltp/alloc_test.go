package oltp

import "testing"

// TestTxnAllocations bounds the hot path's garbage: the driver allocates a
// result per statement and boxes integer arguments; the Runner itself adds
// nothing per transaction.
func TestTxnAllocations(t *testing.T) {
	s := testSpec("wp_alloc", 1, 1000)
	s.RandType = 1 // uniform: no deadlocks with one thread anyway
	o := prepared(t, s)
	r, err := NewRunner(t.Context(), o, 1, Hook{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := testing.AllocsPerRun(200, func() {
		if err := r.Txn(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations per transaction", n)
	if n > 25 {
		t.Errorf("Txn allocates %.1f times; want <= 25 (6 statements)", n)
	}
}
