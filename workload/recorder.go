package workload

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writepath/writepath/hist"
)

// Recorder collects latencies and counters from many goroutines and hands
// them out as views: Tick's intervals (what the worker sends), and any
// number of Views, each everything recorded since its last Mark (a kind's
// own report: after the warm-up, since a checkpoint, a report line's
// interval). Each goroutine records through its own Handle, so the hot
// path takes only that handle's (uncontended) lock and never allocates.
//
// A handle records up to MaxSeries values per operation under its one
// lock (oltp's latency and its uncorrected twin; fio's clat, lat and
// slat), each a series the views know by name; a Local series stays out
// of the intervals. A flush (every Tick, Mark, NewView and Release) swaps
// each series' histogram for an empty one under the handle's lock (a
// pointer swap: the recording goroutine never waits for a merge) and adds
// what it took to the open interval and to every view, outside that lock. Every value is
// therefore in exactly one interval and in every view open when it was
// flushed: a view marked at an interval's end holds exactly the intervals
// after it, so a kind's report and the fabric's summary agree.
type Recorder struct {
	mu struct {
		sync.Mutex
		handles  []*Handle
		nextIdx  int
		ops      map[string]*hist.Histogram // the open interval, per op
		counters map[string]*Counter
		gauges   map[string]*Gauge
		views    []*View
		last     time.Time
		spare    []*hist.Histogram // from Recycle, for Tick
		err      error             // the first merge that dropped values
	}
}

// NewRecorder returns a Recorder whose first interval starts at start.
func NewRecorder(start time.Time) *Recorder {
	r := &Recorder{}
	r.mu.ops = map[string]*hist.Histogram{}
	r.mu.counters = map[string]*Counter{}
	r.mu.gauges = map[string]*Gauge{}
	r.mu.last = start
	return r
}

// MaxSeries is how many values a handle can record per operation.
const MaxSeries = 3

// Series is one value a handle records per operation, by the name views
// (and, unless Local, Tick's intervals) know it.
type Series struct {
	Name string
	// Local keeps the series out of the intervals: only views hold it
	// (fio's lat and slat, which its report shows and the fabric does not
	// carry).
	Local bool
}

// Handle is one goroutine's recording point for one operation: up to
// MaxSeries values per operation (the operation's latency first; then,
// say, an open loop's latency from the actual start beside the one from
// the intended start, or fio's lat and slat beside its clat), all under
// one lock. It is not meant to be shared between goroutines that record
// concurrently (it is safe, but then they contend on its lock).
type Handle struct {
	series [MaxSeries]Series // Name "" for an unused slot
	idx    int               // index of the handle's values in views
	// spare are swapped in at a flush, and hold what was taken until it
	// is added everywhere and reset; guarded by Recorder.mu. A handle
	// alternating between its own two histograms ticks faster than one
	// passing a pool's along (measured: 30-40% less Tick CPU at 64
	// handles).
	spare [MaxSeries]*hist.Histogram
	mu    struct {
		sync.Mutex
		h   [MaxSeries]*hist.Histogram // since the last flush; nil for an unused slot
		sum [MaxSeries]int64           // exact sums since the last flush
	}
}

// Handle returns a new recording handle for operation op ("write",
// "commit", "fsync"). Call it once per goroutine, outside the hot path.
func (r *Recorder) Handle(op string) *Handle { return r.SeriesHandle([MaxSeries]Series{{Name: op}}) }

// TwinHandle returns a handle that records op and, through RecordPair,
// twin (twin "" is Handle). Both are recorded under one lock, and both
// are in the intervals.
func (r *Recorder) TwinHandle(op, twin string) *Handle {
	return r.SeriesHandle([MaxSeries]Series{{Name: op}, {Name: twin}})
}

// SeriesHandle returns a handle recording each named series; series[0] is
// the operation's own. A slot without a name records nothing (fio's slat
// for a synchronous engine), so a caller keeps its values in fixed places.
func (r *Recorder) SeriesHandle(series [MaxSeries]Series) *Handle {
	h := &Handle{series: series}
	for i, s := range series {
		if i == 0 || s.Name != "" {
			h.mu.h[i], h.spare[i] = hist.New(), hist.New()
		}
	}
	r.mu.Lock()
	h.idx = r.mu.nextIdx
	r.mu.nextIdx++
	r.mu.handles = append(r.mu.handles, h)
	for i, s := range series {
		if h.mu.h[i] != nil && !s.Local {
			r.opLocked(s.Name)
		}
	}
	r.mu.Unlock()
	return h
}

// opLocked returns the open interval's histogram of op, creating it.
func (r *Recorder) opLocked(op string) *hist.Histogram {
	h, ok := r.mu.ops[op]
	if !ok {
		h = r.newHistLocked()
		r.mu.ops[op] = h
	}
	return h
}

// Record adds one latency in nanoseconds to the handle's first series.
func (h *Handle) Record(ns int64) {
	h.mu.Lock()
	h.mu.h[0].Record(ns)
	h.mu.sum[0] += max(ns, 0)
	h.mu.Unlock()
}

// RecordPair adds one latency ns and its twin's value twin (dropped when
// the handle has no second series).
func (h *Handle) RecordPair(ns, twin int64) {
	h.mu.Lock()
	h.mu.h[0].Record(ns)
	h.mu.sum[0] += max(ns, 0)
	if t := h.mu.h[1]; t != nil {
		t.Record(twin)
		h.mu.sum[1] += max(twin, 0)
	}
	h.mu.Unlock()
}

// RecordSeries adds v[i] to series i for each of the first n series the
// handle has (a value for an unused slot is dropped): one operation's
// values under one lock.
func (h *Handle) RecordSeries(v [MaxSeries]int64, n int) {
	h.mu.Lock()
	for i := range min(n, MaxSeries) {
		if s := h.mu.h[i]; s != nil {
			s.Record(v[i])
			h.mu.sum[i] += max(v[i], 0)
		}
	}
	h.mu.Unlock()
}

// RecordDuration adds one latency.
func (h *Handle) RecordDuration(d time.Duration) { h.Record(int64(d)) }

// Op is the operation name the handle records.
func (h *Handle) Op() string { return h.series[0].Name }

// Release flushes h one last time and stops tracking it: a goroutine that
// is done recording (a finished round's client) gives its histograms back
// instead of keeping them for the Recorder's life. h must not be used
// afterwards.
func (r *Recorder) Release(h *Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.mu.handles {
		if x == h {
			r.flushHandleLocked(h)
			r.mu.handles = append(r.mu.handles[:i], r.mu.handles[i+1:]...)
			return
		}
	}
}

// Counter is a monotonically increasing count; each interval reports the
// increase since the previous one.
type Counter struct {
	v    atomic.Int64
	last int64 // value at the previous Tick; guarded by Recorder.mu
}

// Add increases the counter by n.
func (c *Counter) Add(n int64) { c.v.Add(n) }

// Load returns the total so far.
func (c *Counter) Load() int64 { return c.v.Load() }

// Counter returns the counter called name, creating it on first use.
func (r *Recorder) Counter(name string) *Counter {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.mu.counters[name]
	if !ok {
		c = &Counter{}
		r.mu.counters[name] = c
	}
	return c
}

// Gauge is an instantaneous value (threads running, queue depth) reported as
// it stands at each Tick.
type Gauge struct{ v atomic.Int64 }

// Set stores v.
func (g *Gauge) Set(v int64) { g.v.Store(v) }

// Add changes the gauge by n.
func (g *Gauge) Add(n int64) { g.v.Add(n) }

// Gauge returns the gauge called name, creating it on first use.
func (r *Recorder) Gauge(name string) *Gauge {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.mu.gauges[name]
	if !ok {
		g = &Gauge{}
		r.mu.gauges[name] = g
	}
	return g
}

// Err returns the first merge that dropped values (a histogram count past
// 2^63), nil otherwise; the values it dropped are in no view.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.err
}

// Snapshot is one interval: the latencies of operations completed in
// [Start, End), the counters' increases, and the gauges at End.
type Snapshot struct {
	Start, End time.Time
	Ops        map[string]*hist.Histogram
	Counters   map[string]int64
	Gauges     map[string]int64
}

// newHistLocked returns a recycled histogram, or a new one.
func (r *Recorder) newHistLocked() *hist.Histogram {
	if n := len(r.mu.spare); n > 0 {
		h := r.mu.spare[n-1]
		r.mu.spare = r.mu.spare[:n-1]
		return h
	}
	return hist.New()
}

// maxSpare bounds the histograms Recycle keeps: a few ops' worth.
const maxSpare = 16

// Recycle hands the histograms of a snapshot back for later Ticks to fill;
// s must not be used afterwards. A caller that is done with each snapshot
// once it is sent (the worker) recycles it, so a steady run allocates
// nothing per interval (a histogram of the shared geometry is 270 KB);
// one that keeps its snapshots does not call it.
func (r *Recorder) Recycle(s Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range s.Ops {
		if len(r.mu.spare) == maxSpare {
			return
		}
		h.Reset()
		r.mu.spare = append(r.mu.spare, h)
	}
}

// OpNames returns the snapshot's operation names, sorted.
func (s Snapshot) OpNames() []string {
	names := make([]string, 0, len(s.Ops))
	for n := range s.Ops {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// mergeLocked adds src into dst, keeping the first dropped merge's error.
func (r *Recorder) mergeLocked(dst, src *hist.Histogram, op string) {
	if err := dst.Merge(src); err != nil && r.mu.err == nil {
		r.mu.err = fmt.Errorf("recorder: op %s: %w", op, err)
	}
}

// flushLocked moves every handle's values into the open interval and the
// open views.
func (r *Recorder) flushLocked() {
	for _, h := range r.mu.handles {
		r.flushHandleLocked(h)
	}
}

// flushHandleLocked swaps h's histograms for its empty spares (the only
// moment h's goroutine can wait: a pointer swap per series), then adds
// what it took to the interval and the views; that becomes the next spare.
func (r *Recorder) flushHandleLocked(h *Handle) {
	h.mu.Lock()
	for i, taken := range h.spare {
		if taken != nil {
			h.mu.h[i], h.spare[i] = taken, h.mu.h[i]
		}
	}
	sums := h.mu.sum
	h.mu.sum = [MaxSeries]int64{}
	h.mu.Unlock()
	for i, taken := range h.spare {
		if taken != nil && taken.Count() > 0 {
			r.distributeLocked(h, i, taken, sums[i])
		}
	}
}

// distributeLocked adds series i's taken histogram (and its exact sum) of
// one handle to the interval and every view, and empties it.
func (r *Recorder) distributeLocked(h *Handle, i int, taken *hist.Histogram, sum int64) {
	s := h.series[i]
	if !s.Local {
		r.mergeLocked(r.opLocked(s.Name), taken, s.Name)
	}
	for _, v := range r.mu.views {
		r.mergeLocked(v.opLocked(s.Name), taken, s.Name)
		hv := v.handleLocked(h)
		hv.stats[i].add(taken, sum)
		if v.perHandle {
			if hv.hists[i] == nil {
				hv.hists[i] = hist.New()
			}
			r.mergeLocked(hv.hists[i], taken, s.Name)
		}
	}
	taken.Reset()
}

// Tick closes the interval ending at end and starts the next one. Every
// operation that has had a handle appears in Ops, empty or not, so that a
// stall shows as an interval with zero operations rather than a missing
// one.
func (r *Recorder) Tick(end time.Time) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
	s := Snapshot{
		Start:    r.mu.last,
		End:      end,
		Ops:      r.mu.ops,
		Counters: make(map[string]int64, len(r.mu.counters)),
		Gauges:   make(map[string]int64, len(r.mu.gauges)),
	}
	r.mu.last = end
	r.mu.ops = make(map[string]*hist.Histogram, len(s.Ops))
	for op := range s.Ops {
		r.mu.ops[op] = r.newHistLocked()
	}
	for name, c := range r.mu.counters {
		v := c.v.Load()
		s.Counters[name] = v - c.last
		c.last = v
	}
	for name, g := range r.mu.gauges {
		s.Gauges[name] = g.v.Load()
	}
	return s
}

// View is a cumulative view of a Recorder: every value recorded and
// every counter's increase since the view was opened or last marked, per
// series name and per handle (count, exact sum, min and max; with
// NewHandleView each handle's histograms too). Its memory is one
// histogram per series name, however many handles record, plus one per
// handle and series for a handle view.
type View struct {
	start     time.Time
	ops       map[string]*hist.Histogram
	counters  map[string]int64 // the counters' values at start
	handles   []handleValues   // by Handle.idx
	perHandle bool
	r         *Recorder
}

// handleValues are one handle's values in a view, by series.
type handleValues struct {
	stats [MaxSeries]Stats
	hists [MaxSeries]*hist.Histogram // handle views only; nil until a value
}

// NewView opens a view at start: values recorded before it are not in it.
func (r *Recorder) NewView(start time.Time) *View { return r.newView(start, false) }

// NewHandleView is NewView keeping each handle's own histograms as well,
// for a report with a row per handle (fio's jobs without
// group_reporting) whose rows add up to the fabric's intervals.
func (r *Recorder) NewHandleView(start time.Time) *View { return r.newView(start, true) }

func (r *Recorder) newView(start time.Time, perHandle bool) *View {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
	v := &View{r: r, perHandle: perHandle}
	v.resetLocked(start)
	r.mu.views = append(r.mu.views, v)
	return v
}

func (v *View) resetLocked(start time.Time) {
	v.start = start
	v.ops = map[string]*hist.Histogram{}
	v.handles = nil
	v.counters = make(map[string]int64, len(v.r.mu.counters))
	for name, c := range v.r.mu.counters {
		v.counters[name] = c.v.Load()
	}
}

func (v *View) opLocked(op string) *hist.Histogram {
	h, ok := v.ops[op]
	if !ok {
		h = hist.New()
		v.ops[op] = h
	}
	return h
}

func (v *View) handleLocked(h *Handle) *handleValues {
	if h.idx >= len(v.handles) {
		v.handles = append(v.handles, make([]handleValues, h.idx+1-len(v.handles))...)
	}
	return &v.handles[h.idx]
}

// Mark returns everything since the view's start or previous mark, up to
// end, and starts the view again at end. A warm-up ends with a Mark whose
// result is dropped; a checkpoint reports one.
func (v *View) Mark(end time.Time) Cumulative {
	r := v.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
	c := Cumulative{Start: v.start, End: end, Ops: v.ops, Counters: make(map[string]int64, len(r.mu.counters)), handles: v.handles}
	for name, cnt := range r.mu.counters {
		c.Counters[name] = cnt.v.Load() - v.counters[name]
	}
	v.resetLocked(end)
	return c
}

// Close stops the view; it must not be used afterwards.
func (v *View) Close() {
	r := v.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.mu.views {
		if x == v {
			r.mu.views = append(r.mu.views[:i], r.mu.views[i+1:]...)
			return
		}
	}
}

// Cumulative is what a View held at a Mark: per series name every value
// recorded in [Start, End), the counters' increases, and each handle's
// values.
type Cumulative struct {
	Start, End time.Time
	Ops        map[string]*hist.Histogram
	Counters   map[string]int64
	handles    []handleValues
}

// Op returns op's histogram, empty when nothing recorded it.
func (c Cumulative) Op(op string) *hist.Histogram {
	if h := c.Ops[op]; h != nil {
		return h
	}
	return hist.New()
}

// Handle returns h's own values in the view: its first series' and its
// second's (the twin).
func (c Cumulative) Handle(h *Handle) HandleStats {
	return HandleStats{Stats: c.Series(h, 0), Twin: c.Series(h, 1)}
}

// Series returns the stats of h's series i in the view.
func (c Cumulative) Series(h *Handle, i int) Stats {
	if h.idx < len(c.handles) && i >= 0 && i < MaxSeries {
		return c.handles[h.idx].stats[i]
	}
	return Stats{}
}

// SeriesHistogram returns h's own histogram of series i in a handle view
// (NewHandleView); empty when h recorded none there, or the view keeps no
// handle's histograms. The caller may keep it: the view starts new ones
// at its Mark.
func (c Cumulative) SeriesHistogram(h *Handle, i int) *hist.Histogram {
	if h.idx < len(c.handles) && i >= 0 && i < MaxSeries {
		if x := c.handles[h.idx].hists[i]; x != nil {
			return x
		}
	}
	return hist.New()
}

// Stats summarize one handle's values of one series: count, exact sum
// (ns) and the histogram's min and max (within its precision).
type Stats struct {
	Count, Sum, Min, Max int64
}

// Mean is the exact mean in ns, 0 when empty.
func (s Stats) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Count)
}

// HandleStats are a handle's Stats and its twin's.
type HandleStats struct {
	Stats
	Twin Stats
}

func (s *Stats) add(taken *hist.Histogram, sum int64) {
	if s.Count == 0 || taken.Min() < s.Min {
		s.Min = taken.Min()
	}
	s.Max = max(s.Max, taken.Max())
	s.Count += taken.Count()
	s.Sum += sum
}
