package blocktrace

import (
	"math/rand/v2"
	"testing"

	"github.com/writepath/writepath/hist"
)

// hdrValues are values around every power of two and bucket edge of the
// geometry, and random ones across it.
func hdrValues() []uint64 {
	vs := []uint64{0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, uint64(hist.Highest) - 1, uint64(hist.Highest), uint64(hist.Highest) + 1}
	for s := 1; s < 43; s++ {
		vs = append(vs, 1<<s-1, 1<<s, 1<<s+1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vs = append(vs, r.Uint64N(uint64(hist.Highest)))
	}
	return vs
}

// TestIndexValueSameBucket: the value a bucket index stands for lands in the
// bucket hist puts the original value in, and is the lowest of it.
func TestIndexValueSameBucket(t *testing.T) {
	h := hist.New()
	for _, v := range hdrValues() {
		idx := hdrIndex(v)
		got := indexValue(idx)
		if v > uint64(hist.Highest) {
			if idx != overflowIndex || got <= hist.Highest {
				t.Errorf("hdrIndex(%d) = %d, value %d; want overflow", v, idx, got)
			}
			continue
		}
		if !h.Equivalent(int64(v), got) {
			t.Errorf("indexValue(hdrIndex(%d) = %d) = %d; not in the same hist bucket", v, idx, got)
		}
		if got > 0 && hdrIndex(uint64(got-1)) == idx {
			t.Errorf("indexValue(%d) = %d is not the lowest of its bucket", idx, got)
		}
		if idx >= overflowIndex {
			t.Errorf("hdrIndex(%d) = %d collides with the overflow index", v, idx)
		}
	}
}

// TestRebuiltHistogramEqualsRecorded: recording values through their index
// gives the same percentiles as recording them into hist directly.
func TestRebuiltHistogramEqualsRecorded(t *testing.T) {
	direct, rebuilt := hist.New(), hist.New()
	for _, v := range hdrValues() {
		direct.Record(int64(v))
		rebuilt.RecordN(indexValue(hdrIndex(v)), 1)
	}
	if direct.Count() != rebuilt.Count() || direct.Overflow() != rebuilt.Overflow() {
		t.Fatalf("count %d/%d overflow %d/%d", direct.Count(), rebuilt.Count(), direct.Overflow(), rebuilt.Overflow())
	}
	for _, p := range []float64{1, 10, 50, 90, 99, 99.9, 100} {
		if a, b := direct.Percentile(p), rebuilt.Percentile(p); a != b {
			t.Errorf("p%v: recorded %d, rebuilt %d", p, a, b)
		}
	}
}

// TestDenseLayout: the programs' page geometry (trace.bpf.c's HDR_MAX_INDEX
// and PAGES_PER_SERIES, mirrored in tick.go) covers hist's whole range.
func TestDenseLayout(t *testing.T) {
	if got := hdrIndex(uint64(hist.Highest)); got != hdrMaxIndex {
		t.Errorf("hdrIndex(hist.Highest) = %d; hdrMaxIndex is %d", got, hdrMaxIndex)
	}
	if denseOverflow>>pageShift >= pagesPerSeries || (pagesPerSeries-1)<<pageShift > denseOverflow {
		t.Errorf("%d pages of %d for %d indexes", pagesPerSeries, pageW, denseOverflow+1)
	}
}
