package coordinator

import (
	"sync"
	"sync/atomic"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// MergeLatencyBounds are the upper bounds, in seconds, of the merge latency
// buckets: the time from an interval's end to its publication (every
// worker reported or the bounded wait ran out, committed to the store).
var MergeLatencyBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Stats is a snapshot of the coordinator's counters for monitoring. The
// coordinator knows no metrics library; a collector reads Stats at scrape
// time.
type Stats struct {
	// WorkersConnected is the number of live worker sessions.
	WorkersConnected int
	// RunsInFlight counts runs in flight by state name ("running").
	RunsInFlight map[string]int
	// RunsEnded counts runs that ended since start, by final state name.
	RunsEnded map[string]uint64
	// IntervalsMerged counts merged intervals published since start.
	IntervalsMerged uint64
	// IntervalsRefused counts worker intervals that failed validation.
	IntervalsRefused uint64
	// WorkersEvicted counts sessions ended for malformed input.
	WorkersEvicted uint64
	// SnapshotsDropped counts per-worker snapshots merged but not stored
	// because the store was MaxQueuedSnapshots behind.
	SnapshotsDropped uint64
	// MergeLatency is the histogram of merge latencies.
	MergeLatency LatencyHistogram
}

// LatencyHistogram is a cumulative histogram over MergeLatencyBounds:
// Counts[i] is how many observations were <= MergeLatencyBounds[i].
type LatencyHistogram struct {
	Counts []uint64
	Count  uint64
	Sum    float64 // seconds
}

// stats are the coordinator's monitoring counters. Counters are atomics
// (bumped from session and writer goroutines); the rest is under mu.
type stats struct {
	intervalsMerged  atomic.Uint64
	intervalsRefused atomic.Uint64
	workersEvicted   atomic.Uint64
	snapshotsDropped atomic.Uint64

	mu struct {
		sync.Mutex
		ended   map[string]uint64
		latency LatencyHistogram
	}
}

// merged records one published interval; latency is from its end.
func (s *stats) merged(mi *writepathv1.MergedInterval, now time.Time) {
	s.intervalsMerged.Add(1)
	sec := max(now.Sub(mi.GetEnd().AsTime()).Seconds(), 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &s.mu.latency
	if h.Counts == nil {
		h.Counts = make([]uint64, len(MergeLatencyBounds))
	}
	for i, b := range MergeLatencyBounds {
		if sec <= b {
			h.Counts[i]++
		}
	}
	h.Count++
	h.Sum += sec
}

// ended records a run's final state.
func (s *stats) ended(state writepathv1.RunState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.ended == nil {
		s.mu.ended = map[string]uint64{}
	}
	s.mu.ended[stateName(state)]++
}

// stateName is a run state as a metric label: "RUN_STATE_PARTIAL" -> "partial".
func stateName(s writepathv1.RunState) string {
	n := s.String()
	const prefix = "RUN_STATE_"
	if len(n) > len(prefix) {
		n = n[len(prefix):]
	}
	b := []byte(n)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Stats returns a snapshot of the coordinator's counters.
func (c *Coordinator) Stats() Stats {
	st := Stats{RunsInFlight: map[string]int{}, RunsEnded: map[string]uint64{},
		IntervalsMerged:  c.stats.intervalsMerged.Load(),
		IntervalsRefused: c.stats.intervalsRefused.Load(),
		WorkersEvicted:   c.stats.workersEvicted.Load(),
		SnapshotsDropped: c.stats.snapshotsDropped.Load()}
	c.mu.Lock()
	st.WorkersConnected = len(c.mu.sessions)
	runs := make([]*run, 0, len(c.mu.runs))
	for _, r := range c.mu.runs {
		runs = append(runs, r)
	}
	c.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		st.RunsInFlight[stateName(r.mu.rec.GetState())]++
		r.mu.Unlock()
	}
	c.stats.mu.Lock()
	defer c.stats.mu.Unlock()
	for k, v := range c.stats.mu.ended {
		st.RunsEnded[k] = v
	}
	h := c.stats.mu.latency
	st.MergeLatency = LatencyHistogram{Counts: make([]uint64, len(MergeLatencyBounds)), Count: h.Count, Sum: h.Sum}
	copy(st.MergeLatency.Counts, h.Counts)
	return st
}
