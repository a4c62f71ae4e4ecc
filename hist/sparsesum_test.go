package hist

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSparseSumEqualsAccumulator: summing sparse lists gives, bucket for
// bucket, what the dense Accumulator gives, whatever the overlap of the
// histograms' buckets (disjoint, nested, identical, empty).
func TestSparseSumEqualsAccumulator(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sum SparseSum
	acc := NewAccumulator()
	var d Decoder
	for i := range 30 {
		h := New()
		lo, span := 1e3*float64(1+i%5), 1e3*pow(10, float64(i%4))
		for range rng.IntN(400) {
			h.Record(int64(lo + span*rng.Float64()))
		}
		if i%7 == 0 {
			h.RecordN(Highest, 2)
		}
		b, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		d.Reset()
		s, err := d.DecodeSparse(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := sum.Add(s); err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(s); err != nil {
			t.Fatal(err)
		}
		if sum.Count() != acc.Count() {
			t.Fatalf("after %d: Count = %d; want %d", i, sum.Count(), acc.Count())
		}
	}
	if !slices.Equal(sum.Histogram().counts, acc.Histogram().counts) {
		t.Fatal("sparse sum differs from the accumulator")
	}
	again := NewAccumulator()
	if err := sum.AddTo(again); err != nil || !slices.Equal(again.Histogram().counts, acc.Histogram().counts) {
		t.Fatalf("AddTo = %v, or a different histogram", err)
	}
	var empty SparseSum
	if h := empty.Histogram(); h.Count() != 0 || empty.Buckets() != 0 {
		t.Errorf("empty sum: count %d, %d buckets", h.Count(), empty.Buckets())
	}
}

func TestSparseSumRefusesOverflow(t *testing.T) {
	sum := SparseSum{total: math.MaxInt64 - 1}
	if err := sum.Add(&Sparse{buckets: []bucket{{idx: 3, cnt: 2}}, total: 2}); !errors.Is(err, ErrMergeDropped) || sum.Count() != math.MaxInt64-1 || sum.Buckets() != 0 {
		t.Errorf("Add past MaxInt64 = %v, count %d, %d buckets; want ErrMergeDropped and no change", err, sum.Count(), sum.Buckets())
	}
}
