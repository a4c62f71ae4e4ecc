package hist

import (
	"fmt"
	"math"
)

// RangeSum sums Sparse histograms into dense counts covering only the range
// of buckets populated so far, for many running sums at once (a
// coordinator's per-worker phase totals: an Accumulator per worker would
// hold ~270 KB each). A host's latencies span a few decades: a 5k IOPS
// host's 200 µs .. 50 ms is ~7,500 buckets, 60 KB, less than a sorted
// sparse list with room to merge into, and adding is an indexed add per
// bucket. The zero value is empty and ready; it is not safe for concurrent
// use.
type RangeSum struct {
	lo     int64   // bucket index of counts[0]
	counts []int64 // buckets lo .. lo+len-1
	total  int64
}

// Add adds every value of s; a sum past MaxInt64 is an error and leaves the
// sum unchanged.
func (r *RangeSum) Add(s *Sparse) error {
	if s.total > math.MaxInt64-r.total {
		return fmt.Errorf("%w: total count past MaxInt64", ErrMergeDropped)
	}
	if len(s.buckets) == 0 {
		return nil
	}
	r.cover(s.buckets[0].idx, s.buckets[len(s.buckets)-1].idx)
	c, lo := r.counts, r.lo
	for _, b := range s.buckets {
		c[b.idx-lo] += b.cnt // cannot overflow: the totals were checked
	}
	r.total += s.total
	return nil
}

// cover grows the range to hold buckets first..last, with an eighth of the
// new span to spare on the side that grew, so a drifting range reallocates
// rarely.
func (r *RangeSum) cover(first, last int64) {
	hi := r.lo + int64(len(r.counts)) - 1
	if r.counts != nil && first >= r.lo && last <= hi {
		return
	}
	newLo, newHi := first, last
	if r.counts != nil {
		newLo, newHi = min(first, r.lo), max(last, hi)
		slack := (newHi - newLo) / 8
		if newLo < r.lo {
			newLo = max(0, newLo-slack)
		}
		if newHi > hi {
			newHi = min(int64(countsLen)-1, newHi+slack)
		}
	}
	c := make([]int64, newHi-newLo+1)
	if r.counts != nil {
		copy(c[r.lo-newLo:], r.counts)
	}
	r.lo, r.counts = newLo, c
}

// Count is the number of values added.
func (r *RangeSum) Count() int64 { return r.total }

// Len is how many buckets the range holds (its memory is 8 bytes each).
func (r *RangeSum) Len() int { return len(r.counts) }

// Histogram returns the sum as a Histogram (allocating its dense counts).
func (r *RangeSum) Histogram() *Histogram {
	a := NewAccumulator()
	r.addTo(a)
	return a.Histogram()
}

// AddTo adds the sum into a; a total past MaxInt64 is an error and leaves
// a unchanged.
func (r *RangeSum) AddTo(a *Accumulator) error {
	if r.total > math.MaxInt64-a.h.total {
		return fmt.Errorf("%w: total count past MaxInt64", ErrMergeDropped)
	}
	r.addTo(a)
	return nil
}

func (r *RangeSum) addTo(a *Accumulator) {
	for i, c := range r.counts {
		if c != 0 {
			a.h.add(int(r.lo)+i, c)
		}
	}
}
