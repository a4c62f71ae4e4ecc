package hist

import (
	"errors"
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
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
type Histogram struct {
	h *hdr.Histogram
	// over counts values above Highest; they are recorded as Highest so the
	// count stays right, and reported so that saturation is never hidden.
	over int64
}

// New returns an empty Histogram with the shared geometry.
func New() *Histogram {
	return &Histogram{h: hdr.New(Lowest, Highest, SigFigs)}
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
	// Cannot fail: ns is inside the geometry's range after clamping.
	_ = h.h.RecordValue(ns)
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
	_ = h.h.RecordValues(ns, n)
}

// ErrMergeDropped reports that a merge could not keep every value.
var ErrMergeDropped = errors.New("histogram merge dropped values")

// Merge adds every value of other into h. Because all Histograms share one
// geometry a merge is exact; a merge that would drop values (count overflow)
// is an error, never a silent loss.
func (h *Histogram) Merge(other *Histogram) error {
	if other == nil {
		return nil
	}
	if dropped := h.h.Merge(other.h); dropped != 0 {
		return fmt.Errorf("%w: %d of %d", ErrMergeDropped, dropped, other.Count())
	}
	h.over += other.over
	return nil
}

// Reset empties h, keeping its memory.
func (h *Histogram) Reset() {
	h.h.Reset()
	h.over = 0
}

// Clone returns an independent copy of h.
func (h *Histogram) Clone() *Histogram {
	return &Histogram{h: h.h.Clone(), over: h.over}
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Overflow is the number of values that exceeded Highest.
func (h *Histogram) Overflow() int64 { return h.over }

// Min is the smallest recorded value (within precision), 0 when empty.
func (h *Histogram) Min() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Min()
}

// Max is the largest recorded value (within precision), 0 when empty.
func (h *Histogram) Max() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Max()
}

// Mean is the arithmetic mean in nanoseconds, 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Mean()
}

// StdDev is the population standard deviation in nanoseconds.
func (h *Histogram) StdDev() float64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.StdDev()
}

// Percentile returns the value at percentile p (0..100], 0 when empty.
func (h *Histogram) Percentile(p float64) int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.ValueAtPercentile(p)
}

// Percentiles returns the values at each of ps, in order.
func (h *Histogram) Percentiles(ps []float64) []int64 {
	if h.Count() == 0 {
		return make([]int64, len(ps))
	}
	return h.h.ValueAtPercentilesSlice(ps)
}

// Equivalent reports whether a and b fall in the same histogram bucket, i.e.
// are equal within the geometry's precision.
func (h *Histogram) Equivalent(a, b int64) bool { return h.h.ValuesAreEquivalent(a, b) }

// Bar is one non-empty bucket: Count values between From and To nanoseconds.
type Bar struct {
	From, To, Count int64
}

// Buckets returns the non-empty buckets in value order.
func (h *Histogram) Buckets() []Bar {
	var out []Bar
	for _, b := range h.h.Distribution() {
		if b.Count != 0 {
			out = append(out, Bar{From: b.From, To: b.To, Count: b.Count})
		}
	}
	return out
}
