package hist

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRangeSumEqualsAccumulator: summing into a growing range gives, bucket
// for bucket, what the dense Accumulator gives, whichever way the range
// grows (below, above, both, inside, empty histograms, the last bucket).
func TestRangeSumEqualsAccumulator(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sum RangeSum
	acc := NewAccumulator()
	var d Decoder
	for i := range 30 {
		h := New()
		lo, span := 1e3*pow(10, float64(i%5)), 1e3*pow(10, float64((i*7)%4))
		for range rng.IntN(400) {
			h.Record(int64(lo + span*rng.Float64()))
		}
		if i%7 == 0 {
			h.RecordN(Highest, 2)
		}
		if i%11 == 0 {
			h.RecordN(0, 1)
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
		t.Fatal("range sum differs from the accumulator")
	}
	again := NewAccumulator()
	if err := sum.AddTo(again); err != nil || !slices.Equal(again.Histogram().counts, acc.Histogram().counts) {
		t.Fatalf("AddTo = %v, or a different histogram", err)
	}
	if sum.Len() > countsLen {
		t.Errorf("range of %d buckets; the geometry has %d", sum.Len(), countsLen)
	}
	var empty RangeSum
	if h := empty.Histogram(); h.Count() != 0 || empty.Len() != 0 {
		t.Errorf("empty sum: count %d, %d buckets", h.Count(), empty.Len())
	}
}

// TestRangeSumHoldsOnlyItsRange: a host's fleet histogram costs its span,
// not the whole geometry.
func TestRangeSumHoldsOnlyItsRange(t *testing.T) {
	var sum RangeSum
	var d Decoder
	for i := range 20 {
		d.Reset()
		s, err := d.DecodeSparse(fleetHistogram(t, uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		sum.Add(s)
	}
	if sum.Len() > countsLen/3 {
		t.Errorf("20 fleet intervals use %d of %d buckets; want a third at most", sum.Len(), countsLen)
	}
}

func TestRangeSumRefusesOverflow(t *testing.T) {
	sum := RangeSum{total: math.MaxInt64 - 1}
	if err := sum.Add(&Sparse{buckets: []bucket{{idx: 3, cnt: 2}}, total: 2}); !errors.Is(err, ErrMergeDropped) || sum.Count() != math.MaxInt64-1 || sum.Len() != 0 {
		t.Errorf("Add past MaxInt64 = %v, count %d, %d buckets; want ErrMergeDropped and no change", err, sum.Count(), sum.Len())
	}
}
