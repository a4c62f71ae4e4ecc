package blocktrace

import "testing"

// TestArrayBatchGrowsGeometrically: a tick reads every page in use, and
// their number grows a few at a time over a run; the buffer doubles, so
// 1,000 one-page growths reallocate it about log2(1000) times, not 1,000.
func TestArrayBatchGrowsGeometrically(t *testing.T) {
	b := newArrayBatch(-1, pageBytes, 2)
	reallocs := 0
	var last *byte
	for n := 1; n <= 1000; n++ {
		b.grow(n)
		if len(b.values) < n*b.stride || len(b.keys) < n {
			t.Fatalf("grow(%d): %d value bytes, %d keys; want at least %d, %d", n, len(b.values), len(b.keys), n*b.stride, n)
		}
		if p := &b.values[0]; p != last {
			reallocs++
			last = p
		}
	}
	if reallocs > 11 {
		t.Errorf("1,000 growths by one element reallocated the values %d times; want at most 11", reallocs)
	}
	for i, k := range b.keys {
		if k != uint32(i) {
			t.Fatalf("keys[%d] = %d", i, k)
		}
	}
}
