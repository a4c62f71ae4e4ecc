package oltp

import (
	"sync/atomic"
	"time"
)

// lateAfter is how far behind its intended start a transaction may begin
// before it counts as late (the schedule has fallen behind).
const lateAfter = time.Millisecond

// pacer is the open-loop schedule of --rate: transaction n (from 0) is
// intended to start at start + n/rate. Threads claim slots with one atomic
// add, so pacing takes no lock. (sysbench spaces arrivals exponentially;
// constant spacing makes the intended start of every transaction
// reproducible and the correction easy to check.)
type pacer struct {
	start    time.Time
	interval float64 // nanoseconds between intended starts
	next     atomic.Int64
}

func newPacer(start time.Time, rate float64) *pacer {
	return &pacer{start: start, interval: 1e9 / rate}
}

// claim returns the intended start of the next transaction.
func (p *pacer) claim() time.Time {
	n := p.next.Add(1) - 1
	return p.start.Add(time.Duration(float64(n) * p.interval))
}
