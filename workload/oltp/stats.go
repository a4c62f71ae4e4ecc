package oltp

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/writepath/writepath/hist"
)

// Counts are one client's running totals, counted as sysbench counts
// them. They are updated by the client's goroutine and may be read by any.
type Counts struct {
	Transactions, Writes, Other, Errors, Reconnects atomic.Int64
}

// threadStats are one run thread's latencies for the local report and the
// final summary. Only its own thread records; the reporter swaps the
// interval histogram, and a checkpoint the totals, under mu.
type threadStats struct {
	mu struct {
		sync.Mutex
		interval *hist.Histogram // since the last interval line
		total    *hist.Histogram // after warm-up, since the last checkpoint
		uncorr   *hist.Histogram // rate mode: from the actual start
		busy     time.Duration   // summed latency (execution time), as total
		events   int64           // transactions, as total
	}
}

func newThreadStats() *threadStats {
	s := &threadStats{}
	s.mu.interval, s.mu.total, s.mu.uncorr = hist.New(), hist.New(), hist.New()
	return s
}

// record adds one transaction: lat from the intended start, uncorr from
// the actual start (equal in closed-loop mode); counted tells whether it
// finished after the warm-up.
func (s *threadStats) record(lat, uncorr time.Duration, counted bool) {
	s.mu.Lock()
	s.mu.interval.RecordDuration(lat)
	if counted {
		s.mu.total.RecordDuration(lat)
		s.mu.uncorr.RecordDuration(uncorr)
		s.mu.busy += uncorr
		s.mu.events++
	}
	s.mu.Unlock()
}

// takeInterval merges the interval histogram into into and resets it.
func (s *threadStats) takeInterval(into *hist.Histogram) {
	s.mu.Lock()
	_ = into.Merge(s.mu.interval) // same geometry: cannot drop
	s.mu.interval.Reset()
	s.mu.Unlock()
}

// threadTotals is a thread's part of a summary.
type threadTotals struct {
	total, uncorr *hist.Histogram
	busy          time.Duration
	events        int64
}

// totals returns the totals so far; with reset (a checkpoint) they start
// again from zero, as sysbench's report checkpoints reset its counters.
func (s *threadStats) totals(reset bool) threadTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := threadTotals{total: s.mu.total.Clone(), uncorr: s.mu.uncorr.Clone(), busy: s.mu.busy, events: s.mu.events}
	if reset {
		s.mu.total.Reset()
		s.mu.uncorr.Reset()
		s.mu.busy, s.mu.events = 0, 0
	}
	return t
}
