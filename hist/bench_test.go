package hist

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// interval is one busy second of transaction latencies: 5,000 values
// around 3 ms.
func interval() *Histogram {
	h := New()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		h.Record(int64(500_000 + r.ExpFloat64()*3e6))
	}
	return h
}

// BenchmarkEncode is one op of an interval as a worker sends it.
func BenchmarkEncode(b *testing.B) {
	h := interval()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMerge is one handle's interval merged into the op's.
func BenchmarkMerge(b *testing.B) {
	h, acc := interval(), New()
	b.ReportAllocs()
	for b.Loop() {
		if err := acc.Merge(h); err != nil {
			b.Fatal(err)
		}
		if acc.Count() > 1<<50 {
			acc.Reset()
		}
	}
}

// TestEncodeSurvivesCollections: Encode's compressor is kept across
// garbage collections (a sync.Pool would drop it, and a new one is 1 MB).
func TestEncodeSurvivesCollections(t *testing.T) {
	h := interval()
	if _, err := h.Encode(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		runtime.GC()
		if _, err := h.Encode(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b > 256<<10 {
		t.Errorf("10 encodes between collections allocated %d bytes; want only their results", b)
	}
}
