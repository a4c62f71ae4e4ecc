package oltp

import (
	"time"

	"github.com/writepath/writepath/workload"
)

// trxOp and uncorrOp are the Recorder's operations of a transaction: its
// latency from the intended start, and (--rate) from its actual start.
const (
	trxOp    = "trx"
	uncorrOp = "trx_uncorrected"
)

// markWarmup ends the warm-up: the summary's view starts again at
// s.warmEnd, so that it holds what the fabric's intervals after the
// warm-up hold. Called once, at the warm-up's end or by the first summary
// after it.
func (s *runState) markWarmup() {
	s.sumMu.Lock()
	defer s.sumMu.Unlock()
	s.markWarmupLocked()
}

func (s *runState) markWarmupLocked() {
	if !s.warmMarked {
		s.warmMarked = true
		s.cum.Mark(s.warmEnd)
	}
}

// summary is the run since the warm-up ended or the last checkpoint, from
// the Recorder's view (the same values as the fabric's intervals), which
// starts again at end: a checkpoint resets the statistics, as sysbench's
// report checkpoints do.
func (s *runState) summary(end time.Time, reset bool) *Summary {
	s.sumMu.Lock()
	defer s.sumMu.Unlock()
	sum := &Summary{Threads: len(s.threads), Seed: s.o.Rand.Seed, Percentile: s.o.Percentile, Rate: s.o.Rate, Late: s.late.Load()}
	from := s.start
	warm := s.o.Warmup > 0
	if warm && end.After(s.warmEnd) {
		from = s.warmEnd
		s.markWarmupLocked() // a run that ended as the warm-up did
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
	c := s.cum.Mark(end)
	if warm && !s.warmMarked {
		c = workload.Cumulative{} // still in the warm-up: nothing counted yet
	}
	total := c.Op(trxOp)
	// The latency's count, not the counter's increase: a mark reads the
	// counters an instant after it takes the histograms, and the two can
	// split a transaction booked in between.
	sum.Transactions = total.Count()
	sum.Writes = c.Counters["writes"]
	sum.Other = c.Counters["other"]
	sum.IgnoredErrors = c.Counters["errors"]
	sum.Reconnects = c.Counters["reconnects"]
	var busy time.Duration
	var events, execs []float64
	for _, t := range s.threads {
		if t.queries != nil {
			if sum.Queries == nil {
				sum.Queries = &QueryStats{}
			}
			*sum.Queries = sum.Queries.merge(t.queries.take(reset))
		}
		hs := c.Handle(t.trx)
		// Execution time is from the actual start, as sysbench's (the
		// uncorrected twin; without --rate both are one).
		exec := time.Duration(hs.Sum)
		if s.pacer != nil {
			exec = time.Duration(hs.Twin.Sum)
		}
		busy += exec
		events = append(events, float64(hs.Count))
		execs = append(execs, exec.Seconds())
		sum.PerThread = append(sum.PerThread, ThreadStat{Events: hs.Count, Min: ms(hs.Min),
			Avg: hs.Mean() / 1e6, Max: ms(hs.Max), SumSec: exec.Seconds()})
	}
	sum.Latency = latencyOf(total, s.o.Percentile, busy)
	if s.pacer != nil {
		u := latencyOf(c.Op(uncorrOp), s.o.Percentile, busy)
		sum.Uncorrected = &u
	}
	sum.EventsAvg, sum.EventsStddev = meanStddev(events)
	sum.ExecTimeAvgSec, sum.ExecTimeStddevSec = meanStddev(execs)
	sum.hist = total
	return sum
}
