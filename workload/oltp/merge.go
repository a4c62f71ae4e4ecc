package oltp

import (
	"math"

	"github.com/writepath/writepath/hist"
)

// MergeSummaries combines the run summaries of several workers into the
// one sysbench would print for all their threads: counts and sums add up,
// the longest time is the run's, minimum and maximum are the extremes,
// the average is the summed latency over all events, the fairness is over
// every thread; the percentile comes from h, the workers' histograms
// merged (nil: none is printed exact, the parts' largest is kept).
// Checkpoint reports merge index by index (their percentile is the parts'
// largest unless checkpoint histograms are given).
func MergeSummaries(parts []*Summary, h *hist.Histogram, checkpoints []*hist.Histogram) *Summary {
	if len(parts) == 0 {
		return nil
	}
	m := &Summary{Seed: parts[0].Seed, Percentile: parts[0].Percentile}
	first := true
	var events, execs []float64
	var execSum float64 // the parts' execution time before a forced shutdown's unfinished events
	for _, p := range parts {
		execSum += p.ExecTimeAvgSec * float64(p.Threads)
		m.Threads += p.Threads
		m.TotalTimeSec = math.Max(m.TotalTimeSec, p.TotalTimeSec)
		m.IntervalSec = math.Max(m.IntervalSec, p.IntervalSec)
		m.Transactions += p.Transactions
		m.Reads += p.Reads
		m.Writes += p.Writes
		m.Other += p.Other
		m.IgnoredErrors += p.IgnoredErrors
		m.Reconnects += p.Reconnects
		m.Rate += p.Rate
		m.Late += p.Late
		m.Unfinished += p.Unfinished
		m.ForcedShutdown = m.ForcedShutdown || p.ForcedShutdown
		m.CheckpointSec = math.Max(m.CheckpointSec, p.CheckpointSec)
		if p.Transactions > 0 {
			if first || p.Latency.Min < m.Latency.Min {
				m.Latency.Min = p.Latency.Min
			}
			first = false
		}
		m.Latency.Max = math.Max(m.Latency.Max, p.Latency.Max)
		m.Latency.Pct = math.Max(m.Latency.Pct, p.Latency.Pct)
		m.Latency.Sum += p.Latency.Sum
		m.PerThread = append(m.PerThread, p.PerThread...)
		if p.Queries != nil {
			if m.Queries == nil {
				m.Queries = &QueryStats{}
			}
			*m.Queries = m.Queries.merge(*p.Queries)
		}
		for _, t := range p.PerThread {
			events = append(events, float64(t.Events))
			execs = append(execs, t.SumSec)
		}
	}
	if m.Transactions > 0 {
		m.Latency.Avg = m.Latency.Sum / float64(m.Transactions)
	}
	if h != nil && m.Percentile > 0 {
		m.Latency.Pct = ms(h.Percentile(m.Percentile))
		m.hist = h
	}
	m.EventsAvg, m.EventsStddev = meanStddev(events)
	m.ExecTimeAvgSec, m.ExecTimeStddevSec = meanStddev(execs)
	if m.ForcedShutdown && m.Threads > 0 {
		// The average leaves the cut-off events out, the deviation not
		// (addUnfinished says why).
		m.ExecTimeAvgSec = execSum / float64(m.Threads)
		m.ExecTimeStddevSec = stddevAround(m.ExecTimeAvgSec, execs)
	}
	for i := range parts[0].Checkpoints {
		var cps []*Summary
		for _, p := range parts {
			if i < len(p.Checkpoints) {
				cps = append(cps, p.Checkpoints[i])
			}
		}
		var ch *hist.Histogram
		if i < len(checkpoints) {
			ch = checkpoints[i]
		}
		m.Checkpoints = append(m.Checkpoints, MergeSummaries(cps, ch, nil))
	}
	return m
}
