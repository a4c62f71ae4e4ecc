package oltp

import (
	"time"

	"github.com/writepath/writepath/hist"
)

// summary gathers the threads' statistics since the warm-up ended or the
// last checkpoint. With reset (a checkpoint) the counts and latencies
// start again from zero.
func (s *runState) summary(end time.Time, reset bool) *Summary {
	s.sumMu.Lock()
	defer s.sumMu.Unlock()
	sum := &Summary{Threads: len(s.threads), Seed: s.o.Rand.Seed, Percentile: s.o.Percentile, Rate: s.o.Rate, Late: s.late.Load()}
	from := s.start
	if s.o.Warmup > 0 && end.After(s.warmEnd) {
		from = s.warmEnd
	}
	sum.TotalTimeSec = end.Sub(from).Seconds()
	since := from
	if s.lastCheckpoint.After(since) {
		since = s.lastCheckpoint
	}
	sum.IntervalSec = end.Sub(since).Seconds()
	if reset {
		s.lastCheckpoint = end
	}
	total, uncorr := hist.New(), hist.New()
	var busy time.Duration
	var events, execs []float64
	for _, t := range s.threads {
		c := t.counts
		now := countSnap{c.Transactions.Load(), c.Writes.Load(), c.Other.Load(), c.Errors.Load(), c.Reconnects.Load()}
		base := t.base
		if !t.baseSet.Load() {
			base = now // still in the warm-up: nothing counted yet
		}
		if t.ckpt.set && t.ckpt.snap.trx >= base.trx {
			base = t.ckpt.snap
		}
		sum.Transactions += now.trx - base.trx
		sum.Writes += now.writes - base.writes
		sum.Other += now.other - base.other
		sum.IgnoredErrors += now.errors - base.errors
		sum.Reconnects += now.reconnects - base.reconnects
		if reset {
			t.ckpt.snap, t.ckpt.set = now, true
		}
		if t.queries != nil {
			if sum.Queries == nil {
				sum.Queries = &QueryStats{}
			}
			*sum.Queries = sum.Queries.merge(t.queries.take(reset))
		}
		tt := t.st.totals(reset)
		_ = total.Merge(tt.total) // same geometry: cannot drop
		_ = uncorr.Merge(tt.uncorr)
		busy += tt.busy
		events = append(events, float64(tt.events))
		execs = append(execs, tt.busy.Seconds())
		sum.PerThread = append(sum.PerThread, ThreadStat{Events: tt.events, Min: ms(tt.total.Min()),
			Avg: tt.total.Mean() / 1e6, Max: ms(tt.total.Max()), SumSec: tt.busy.Seconds()})
	}
	sum.Latency = latencyOf(total, s.o.Percentile, busy)
	if s.pacer != nil {
		u := latencyOf(uncorr, s.o.Percentile, busy)
		sum.Uncorrected = &u
	}
	sum.EventsAvg, sum.EventsStddev = meanStddev(events)
	sum.ExecTimeAvgSec, sum.ExecTimeStddevSec = meanStddev(execs)
	sum.hist = total
	return sum
}
