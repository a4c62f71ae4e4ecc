package hist

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// The geometry every Histogram shares. Values are nanoseconds; the range
// 1 ns .. 1 h at 3 significant figures resolves a 10 µs fsync to 10 ns and a
// 2 s stall to 2 ms, which is what storage latency needs.
const (
	// Lowest is the smallest distinguishable value, in nanoseconds.
	Lowest int64 = 1
	// Highest is the largest value a Histogram tracks, in nanoseconds (1 h).
	Highest int64 = int64(time.Hour)
	// SigFigs is the number of significant decimal digits kept.
	SigFigs = 3
)

// Histogram is a latency histogram of nanosecond values. The zero value is not
// usable; call New. A Histogram is not safe for concurrent use.
//
// It keeps HdrHistogram's counts array of the shared geometry itself (the
// same buckets, the same V2 encoding, the same answers to every query, which
// the tests check against hdrhistogram-go), and the range of indexes that
// hold values: merges, resets, encodes and queries then touch only that
// range instead of walking all 33,792 buckets through the library's
// iterator, which cost milliseconds per histogram and, in Encode, a new
// 1 MB compressor each time.
type Histogram struct {
	counts []int64 // countsLen buckets
	total  int64
	// lo and hi are the first and last index with a non-zero count
	// (lo = emptyLo, hi = -1 when the histogram is empty).
	lo, hi int
	// over counts values above Highest; they are recorded as Highest so the
	// count stays right, and reported so that saturation is never hidden.
	over int64
}

// New returns an empty Histogram with the shared geometry.
func New() *Histogram {
	return &Histogram{counts: make([]int64, countsLen), lo: emptyLo, hi: -1}
}

// Record adds one value in nanoseconds. Values below 0 count as 0 and values
// above Highest count as Highest (and in Overflow). It does not allocate.
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	if ns > Highest {
		ns = Highest
		h.over++
	}
	if h.total == math.MaxInt64 {
		return // as HdrHistogram refuses a value that would wrap the total
	}
	h.add(indexOf(ns), 1)
}

// add adds n > 0 to bucket idx.
func (h *Histogram) add(idx int, n int64) {
	h.counts[idx] += n
	h.total += n
	if idx < h.lo {
		h.lo = idx
	}
	if idx > h.hi {
		h.hi = idx
	}
}

// RecordDuration adds one duration.
func (h *Histogram) RecordDuration(d time.Duration) { h.Record(int64(d)) }

// RecordN adds n occurrences of the value ns.
func (h *Histogram) RecordN(ns, n int64) {
	if n <= 0 {
		return
	}
	if ns < 0 {
		ns = 0
	}
	if ns > Highest {
		ns = Highest
		h.over += n
	}
	if _, ok := addSat(h.total, n); !ok {
		return
	}
	h.add(indexOf(ns), n)
}

// ErrMergeDropped reports that a merge could not keep every value.
var ErrMergeDropped = errors.New("histogram merge dropped values")

// Merge adds every value of other into h. Because all Histograms share one
// geometry a merge is exact; a merge that would drop values (count overflow)
// is an error and leaves h unchanged, never a silent loss.
func (h *Histogram) Merge(other *Histogram) error {
	if other == nil || other.total == 0 {
		return nil
	}
	total, ok := addSat(h.total, other.total)
	if !ok {
		return fmt.Errorf("%w: %d of %d", ErrMergeDropped, other.total, other.total)
	}
	src := other.counts[other.lo : other.hi+1]
	dst := h.counts[other.lo : other.hi+1]
	for i, c := range src {
		dst[i] += c
	}
	h.total = total
	h.lo, h.hi = min(h.lo, other.lo), max(h.hi, other.hi)
	h.over += other.over
	return nil
}

// Reset empties h, keeping its memory.
func (h *Histogram) Reset() {
	if h.hi >= h.lo {
		clear(h.counts[h.lo : h.hi+1])
	}
	h.total, h.lo, h.hi, h.over = 0, emptyLo, -1, 0
}

// Clone returns an independent copy of h.
func (h *Histogram) Clone() *Histogram {
	c := *h
	c.counts = append([]int64(nil), h.counts...)
	return &c
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.total }

// Overflow is the number of values that exceeded Highest.
func (h *Histogram) Overflow() int64 { return h.over }

// Min is the smallest recorded value (within precision), 0 when empty.
func (h *Histogram) Min() int64 {
	if h.total == 0 {
		return 0
	}
	return lowestEquivalent(highestEquivalent(valueAt(h.lo)))
}

// Max is the largest recorded value (within precision), 0 when empty.
func (h *Histogram) Max() int64 {
	if h.total == 0 {
		return 0
	}
	return highestEquivalent(highestEquivalent(valueAt(h.hi)))
}

// Mean is the arithmetic mean in nanoseconds, 0 when empty. Each bucket
// counts as its middle value, summed in index order as HdrHistogram does.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	var mean float64
	total := float64(h.total)
	for i := h.lo; i <= h.hi; i++ {
		if c := h.counts[i]; c != 0 {
			mean += float64(c) * float64(medianEquivalent(valueAt(i))) / total
		}
	}
	return mean
}

// StdDev is the population standard deviation in nanoseconds.
func (h *Histogram) StdDev() float64 {
	if h.total == 0 {
		return 0
	}
	mean := h.Mean()
	var dev2 float64
	total := float64(h.total)
	for i := h.lo; i <= h.hi; i++ {
		if c := h.counts[i]; c != 0 {
			dev := float64(medianEquivalent(valueAt(i))) - mean
			dev2 += (dev * dev) * float64(c) / total
		}
	}
	return math.Sqrt(dev2)
}

// Percentile returns the value at percentile p (0..100], 0 when empty: the
// highest value of the bucket where the count reaches p's rank (the lowest,
// for p <= 0).
func (h *Histogram) Percentile(p float64) int64 {
	if h.total == 0 {
		return 0
	}
	p = max(p, 0)
	v := valueAt(h.indexAtRank(percentileRank(p, h.total)))
	if p == 0 {
		return lowestEquivalent(v)
	}
	return highestEquivalent(v)
}

// indexAtRank is the first index where the cumulative count reaches rank
// (1 <= rank <= total).
func (h *Histogram) indexAtRank(rank int64) int {
	var sum int64
	for i := h.lo; i <= h.hi; i++ {
		if sum += h.counts[i]; sum >= rank {
			return i
		}
	}
	return h.hi
}

// Percentiles returns the values at each of ps, in order.
func (h *Histogram) Percentiles(ps []float64) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = h.Percentile(p)
	}
	return out
}

// ValuesAtRanks returns, for each 1-based rank r, the highest value
// equivalent to the r-th smallest recorded value (a rank past the count
// gives the largest). It serves tools whose percentiles rank otherwise
// than HdrHistogram's round(p/100·N): fio takes the first value at or past
// p/100·N, i.e. rank ceil(p/100·N), and in a sparse tail the two differ
// by a whole sample. 0s when empty.
func (h *Histogram) ValuesAtRanks(ranks []int64) []int64 {
	out := make([]int64, len(ranks))
	bars := h.Buckets()
	if len(bars) == 0 {
		return out
	}
	for i, r := range ranks {
		out[i] = bars[len(bars)-1].To
		var sum int64
		for _, b := range bars {
			if sum += b.Count; sum >= r {
				out[i] = b.To
				break
			}
		}
	}
	return out
}

// Equivalent reports whether a and b fall in the same histogram bucket, i.e.
// are equal within the geometry's precision.
func (h *Histogram) Equivalent(a, b int64) bool { return lowestEquivalent(a) == lowestEquivalent(b) }

// Bar is one non-empty bucket: Count values between From and To nanoseconds.
type Bar struct {
	From, To, Count int64
}

// Buckets returns the non-empty buckets in value order.
func (h *Histogram) Buckets() []Bar {
	var out []Bar
	for i := h.lo; i <= h.hi; i++ {
		if c := h.counts[i]; c != 0 {
			v := valueAt(i)
			out = append(out, Bar{From: lowestEquivalent(v), To: highestEquivalent(v), Count: c})
		}
	}
	return out
}
