package oltp

import (
	"context"
	"sync"
	"time"

	"github.com/writepath/writepath/workload"
)

// The run's ends that sysbench reports with these words. Each ends the
// phase for every worker of a run (workload.ErrEndsPhase): sysbench ends
// all its threads there, so the fabric stops the other workers in order,
// and their totals to that moment count in the run's report.
var (
	// ErrForcedShutdown: transactions were still running --forced-shutdown
	// after --time (sysbench then prints its report and exits 2).
	ErrForcedShutdown = workload.EndsPhase("The --max-time limit has expired, forcing shutdown...")
	// ErrQueueFull: in --rate mode the threads fell behind the schedule by
	// more than sysbench's event queue holds (sysbench exits 1).
	ErrQueueFull = workload.EndsPhase("The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate")
)

// maxQueue is sysbench's MAX_QUEUE_LEN: --rate events due and not yet
// taken by a thread.
const maxQueue = 131072

// watch starts what the run does by the clock, beside the clients: the
// --report-interval lines, the --report-checkpoints reports, the
// --forced-shutdown deadline and the --rate backlog check. stop ends them
// and returns the checkpoint reports.
func (s *runState) watch(ctx context.Context, cancel context.CancelCauseFunc) (stop func() []*Summary) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	var reports []*Summary
	if s.o.Warmup > 0 {
		wg.Go(func() {
			if sleepUntil(quit, s.warmEnd) {
				s.markWarmup()
			}
		})
	}
	if s.o.ReportInterval > 0 && s.o.Text != nil {
		lines := s.rec.NewView(s.start)
		wg.Go(func() { defer lines.Close(); s.reportLoop(quit, lines) })
	}
	if len(s.o.Checkpoints) > 0 {
		wg.Go(func() { reports = s.checkpointLoop(quit) })
	}
	if s.o.ForcedShutdown != nil && !s.end.IsZero() {
		wg.Go(func() {
			if sleepUntil(quit, s.end.Add(*s.o.ForcedShutdown)) && s.running.Load() > 0 {
				s.cutOff(ErrForcedShutdown, cancel)
			}
		})
	}
	if s.pacer != nil {
		wg.Go(func() { s.queueLoop(quit, cancel) })
	}
	_ = ctx
	return func() []*Summary { close(quit); wg.Wait(); return reports }
}

// cutOff ends the clients with cause, the first time only, counting the
// transactions it cuts off: those of the clients still in their loop
// (after --time: in a transaction), counted before any client sees the
// cancellation.
func (s *runState) cutOff(cause error, cancel context.CancelCauseFunc) {
	s.cutMu.Lock()
	defer s.cutMu.Unlock()
	if s.cut {
		return
	}
	s.cut, s.cutAt = true, time.Now()
	s.unfinished.Store(s.running.Load())
	for _, t := range s.threads {
		t.cutBegan = t.began.Load()
	}
	cancel(cause)
}

// sleepUntil waits for t; false if quit came first.
func sleepUntil(quit <-chan struct{}, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-quit:
		return false
	case <-timer.C:
		return true
	}
}

// reportLoop prints an interval line every --report-interval from the
// start, from the Recorder's view lines (marked at each line).
func (s *runState) reportLoop(quit <-chan struct{}, lines *workload.View) {
	var done int64 // transactions finished, for the --rate backlog
	prev := s.start
	for k := 1; ; k++ {
		if !sleepUntil(quit, s.start.Add(time.Duration(k)*s.o.ReportInterval)) {
			return
		}
		now := time.Now()
		if s.running.Load() == 0 {
			return // the clients are done: sysbench silences its reports then
		}
		c := lines.Mark(now)
		d := Counts64{Transactions: c.Counters["transactions"], Writes: c.Counters["writes"], Other: c.Counters["other"],
			Errors: c.Counters["errors"], Reconnects: c.Counters["reconnects"]}
		done += d.Transactions
		elapsed, secs := now.Sub(s.start).Seconds(), now.Sub(prev).Seconds()
		var lat float64
		if s.o.Percentile > 0 {
			lat = ms(c.Op(trxOp).Percentile(s.o.Percentile))
		}
		s.o.Text.Log(Line{Level: LevelNotice, Stamped: true,
			Text: IntervalLine(elapsed, secs, int(s.running.Load()), d, int(s.o.Percentile), lat)})
		if s.pacer != nil {
			queue, conc := s.backlog(now, done)
			s.o.Text.Log(Line{Level: LevelNotice, Stamped: true, Text: QueueLine(elapsed, queue, conc)})
		}
		prev = now
	}
}

// backlog is the --rate schedule's state at now: events due and not
// taken by a thread (sysbench's queue length), and transactions taken and
// not finished (its concurrency), given done finished transactions.
func (s *runState) backlog(now time.Time, done int64) (queue, concurrency int64) {
	due := int64(now.Sub(s.start).Seconds() * s.o.Rate)
	claimed := s.pacer.next.Load()
	started := min(claimed, due)
	return max(due-claimed, 0), min(max(started-done, 0), int64(len(s.threads)))
}

// checkpointLoop reports and resets the statistics at each checkpoint.
func (s *runState) checkpointLoop(quit <-chan struct{}) []*Summary {
	var out []*Summary
	for _, cp := range s.o.Checkpoints {
		at := s.start.Add(cp)
		if !at.After(time.Now()) {
			continue
		}
		if !s.end.IsZero() && at.After(s.end) || !sleepUntil(quit, at) {
			return out
		}
		now := time.Now()
		sum := s.summary(now, true)
		sum.CheckpointSec = now.Sub(s.start).Seconds()
		s.o.Text.Log(Line{Level: LevelNotice, Stamped: true, Text: CheckpointLine(sum.CheckpointSec)})
		if s.o.Text != nil {
			sum.Report(s.o.Text)
		}
		out = append(out, sum)
	}
	return out
}

// queueLoop ends a --rate run whose backlog outgrew sysbench's queue.
// It also keeps the backlog in the Recorder's gauges queue_length and
// concurrency (as of its last tick), from which a fabric's client prints
// sysbench's queue line for the merged run.
func (s *runState) queueLoop(quit <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	queueG, concG := s.rec.Gauge(GaugeQueueLength), s.rec.Gauge(GaugeConcurrency)
	for {
		select {
		case <-quit:
			return
		case now := <-t.C:
			if !s.end.IsZero() && now.After(s.end) {
				return
			}
			q, c := s.backlog(now, s.total.trx.Load())
			if q > maxQueue {
				cancel(ErrQueueFull)
				return
			}
			queueG.Set(q)
			concG.Set(c)
		}
	}
}

// The gauges of a --rate run's backlog (sysbench's queue line).
const (
	GaugeQueueLength = "queue_length"
	GaugeConcurrency = "concurrency"
)
