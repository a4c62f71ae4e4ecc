package oltp

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
)

// TestSummaryAgreesWithIntervals: the run's summary (sysbench's sections)
// and the fabric's view of the same run (every interval the worker sends,
// merged) hold the same transactions, counters and percentiles, for the
// latency and its uncorrected twin: both are the Recorder's. A dry run
// (--mysql-dry-run) needs no server; --rate makes the twin.
func TestSummaryAgreesWithIntervals(t *testing.T) {
	o := Options{Tables: 2, TableSize: 1000, Threads: 3, Events: 3000, Rate: 4000, Percentile: 95,
		DryRun: true, NoStatus: true, DeleteInserts: 1, IndexUpdates: 1, NonIndexUpdates: 1}
	o.Rand.Seed = 7
	start := time.Now().Add(50 * time.Millisecond)
	rec := workload.NewRecorder(start)
	merged := map[string]*hist.Histogram{trxOp: hist.New(), uncorrOp: hist.New()}
	counters := map[string]int64{}
	add := func(s workload.Snapshot) {
		for op, h := range merged {
			if err := h.Merge(s.Ops[op]); err != nil {
				t.Fatal(err)
			}
		}
		for k, v := range s.Counters {
			counters[k] += v
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { // the worker's ticks
		for k := 1; ; k++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(time.Duration(k) * 20 * time.Millisecond))):
				add(rec.Tick(time.Now()))
			}
		}
	})
	sum, err := Run(context.Background(), o, workload.Env{Start: start}, rec)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	add(rec.Tick(time.Now())) // the worker's last interval
	tr := merged[trxOp]
	t.Logf("%d transactions, %d writes; p95 %.3f ms, uncorrected %.3f ms", sum.Transactions, sum.Writes, sum.Latency.Pct, sum.Uncorrected.Pct)
	if sum.Transactions != 3000 || tr.Count() != sum.Transactions || counters["transactions"] != sum.Transactions ||
		counters["writes"] != sum.Writes || counters["other"] != sum.Other || merged[uncorrOp].Count() != sum.Transactions {
		t.Fatalf("summary: %d transactions, %d writes, %d other; intervals: %d trx, %d uncorrected, counters %v",
			sum.Transactions, sum.Writes, sum.Other, tr.Count(), merged[uncorrOp].Count(), counters)
	}
	if want := latencyOf(tr, o.Percentile, 0); sum.Latency.Pct != want.Pct || sum.Latency.Max != want.Max || sum.Latency.Min != want.Min {
		t.Errorf("summary latency %+v; the intervals' %+v", sum.Latency, want)
	}
	if want := latencyOf(merged[uncorrOp], o.Percentile, 0); sum.Uncorrected.Pct != want.Pct || sum.Uncorrected.Max != want.Max {
		t.Errorf("summary uncorrected latency %+v; the intervals' %+v", *sum.Uncorrected, want)
	}
	for _, p := range []float64{50, 99, 99.9, 100} {
		if g, w := sum.Histogram().Percentile(p), tr.Percentile(p); g != w {
			t.Errorf("summary p%v = %d; intervals' %d", p, g, w)
		}
	}
	var events int64
	for _, th := range sum.PerThread {
		events += th.Events
	}
	if events != sum.Transactions {
		t.Errorf("threads' events add up to %d; want %d", events, sum.Transactions)
	}
}

// TestWarmupExcluded: the summary counts what finished after the
// warm-up (the view is marked at its end), the intervals everything.
func TestWarmupExcluded(t *testing.T) {
	o := Options{Tables: 1, TableSize: 1000, Threads: 2, Time: 1500 * time.Millisecond, Warmup: 500 * time.Millisecond,
		Rate: 2000, Percentile: 95, DryRun: true, NoStatus: true, DeleteInserts: 1, IndexUpdates: 1, NonIndexUpdates: 1}
	rec := workload.NewRecorder(time.Now())
	sum, err := Run(context.Background(), o, workload.Env{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	all := rec.Tick(time.Now())
	n := all.Counters["transactions"]
	t.Logf("summary %d transactions over %.2f s; intervals %d", sum.Transactions, sum.TotalTimeSec, n)
	if sum.Transactions == 0 || sum.Transactions >= n || sum.Histogram().Count() != sum.Transactions {
		t.Errorf("summary %d transactions (latency of %d); want some, fewer than the run's %d", sum.Transactions, sum.Histogram().Count(), n)
	}
	if sum.TotalTimeSec < 0.9 || sum.TotalTimeSec > 1.5 {
		t.Errorf("summary over %.2f s; want the 1 s after the warm-up", sum.TotalTimeSec)
	}
}
