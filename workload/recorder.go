package workload

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writepath/writepath/hist"
)

// Recorder collects one interval's latencies and counters from many
// goroutines. Each goroutine records through its own Handle, so the hot path
// takes only that handle's (uncontended) lock and never allocates; Tick
// takes every handle's lock once per interval to swap its histogram out.
type Recorder struct {
	mu struct {
		sync.Mutex
		handles  []*Handle
		counters map[string]*Counter
		gauges   map[string]*Gauge
		last     time.Time
		spare    []*hist.Histogram // from Recycle, for Tick
	}
}

// NewRecorder returns a Recorder whose first interval starts at start.
func NewRecorder(start time.Time) *Recorder {
	r := &Recorder{}
	r.mu.counters = map[string]*Counter{}
	r.mu.gauges = map[string]*Gauge{}
	r.mu.last = start
	return r
}

// Handle is one goroutine's recording point for one operation name. It is
// not meant to be shared between goroutines that record concurrently (it is
// safe, but then they contend on its lock).
type Handle struct {
	op string
	mu struct {
		sync.Mutex
		h *hist.Histogram
	}
}

// Handle returns a new recording handle for operation op ("write",
// "commit", "fsync"). Call it once per goroutine, outside the hot path.
func (r *Recorder) Handle(op string) *Handle {
	h := &Handle{op: op}
	h.mu.h = hist.New()
	r.mu.Lock()
	r.mu.handles = append(r.mu.handles, h)
	r.mu.Unlock()
	return h
}

// Record adds one latency in nanoseconds.
func (h *Handle) Record(ns int64) {
	h.mu.Lock()
	h.mu.h.Record(ns)
	h.mu.Unlock()
}

// RecordDuration adds one latency.
func (h *Handle) RecordDuration(d time.Duration) { h.Record(int64(d)) }

// Op is the operation name the handle records.
func (h *Handle) Op() string { return h.op }

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

// Tick closes the interval ending at end and starts the next one. Every
// operation that has a handle appears in Ops, empty or not, so that a stall
// shows as an interval with zero operations rather than a missing one.
func (r *Recorder) Tick(end time.Time) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Snapshot{
		Start:    r.mu.last,
		End:      end,
		Ops:      map[string]*hist.Histogram{},
		Counters: make(map[string]int64, len(r.mu.counters)),
		Gauges:   make(map[string]int64, len(r.mu.gauges)),
	}
	r.mu.last = end
	for _, h := range r.mu.handles {
		acc, ok := s.Ops[h.op]
		if !ok {
			acc = r.newHistLocked()
			s.Ops[h.op] = acc
		}
		h.mu.Lock()
		// Cannot drop: every histogram shares one geometry and an interval
		// cannot hold 2^63 values.
		_ = acc.Merge(h.mu.h)
		h.mu.h.Reset()
		h.mu.Unlock()
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
