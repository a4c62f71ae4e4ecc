package hist

import (
	"fmt"
	"math"
)

// SparseSum sums Sparse histograms keeping only the populated buckets, for
// many running sums at once (a coordinator's per-worker phase totals: an
// Accumulator per worker would hold ~270 KB each, a SparseSum ~12 bytes per
// populated bucket). Adding is a merge of two sorted lists. The zero value
// is empty and ready; it is not safe for concurrent use.
type SparseSum struct {
	idx   []int32 // populated bucket indices, ascending
	cnt   []int64 // their counts
	spare struct {
		idx []int32
		cnt []int64
	}
	total int64
}

// Add adds every value of s; a sum past MaxInt64 is an error and leaves the
// sum unchanged.
func (m *SparseSum) Add(s *Sparse) error {
	if s.total > math.MaxInt64-m.total {
		return fmt.Errorf("%w: total count past MaxInt64", ErrMergeDropped)
	}
	idx, cnt := m.spare.idx[:0], m.spare.cnt[:0]
	i := 0
	for _, b := range s.buckets {
		for i < len(m.idx) && int64(m.idx[i]) < b.idx {
			idx, cnt = append(idx, m.idx[i]), append(cnt, m.cnt[i])
			i++
		}
		c := b.cnt
		if i < len(m.idx) && int64(m.idx[i]) == b.idx {
			c += m.cnt[i] // cannot overflow: the totals were checked
			i++
		}
		idx, cnt = append(idx, int32(b.idx)), append(cnt, c) // idx < countsLen < 2^31
	}
	idx, cnt = append(idx, m.idx[i:]...), append(cnt, m.cnt[i:]...)
	m.spare.idx, m.spare.cnt = m.idx, m.cnt
	m.idx, m.cnt = idx, cnt
	m.total += s.total
	return nil
}

// Count is the number of values added.
func (m *SparseSum) Count() int64 { return m.total }

// Buckets is the number of populated buckets.
func (m *SparseSum) Buckets() int { return len(m.idx) }

// Compact drops the spare buffer Add merges into, for a sum that is kept
// but no longer added to.
func (m *SparseSum) Compact() { m.spare.idx, m.spare.cnt = nil, nil }

// Histogram returns the sum as a Histogram (allocating its dense counts).
func (m *SparseSum) Histogram() *Histogram {
	a := NewAccumulator()
	for i, x := range m.idx {
		a.h.add(int(x), m.cnt[i])
	}
	return a.Histogram()
}

// AddTo adds the sum into a; a total past MaxInt64 is an error and leaves
// a unchanged.
func (m *SparseSum) AddTo(a *Accumulator) error {
	if m.total > math.MaxInt64-a.h.total {
		return fmt.Errorf("%w: total count past MaxInt64", ErrMergeDropped)
	}
	for i, x := range m.idx {
		a.h.add(int(x), m.cnt[i])
	}
	return nil
}
