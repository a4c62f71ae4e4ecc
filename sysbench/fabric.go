package sysbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/hist"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/workload/oltp"
)

// Fabric runs commands on a coordinator's workers.
type Fabric struct {
	Client *client.Client
	// Selector and Workers choose the workers, as `writepath run` does.
	Selector map[string]string
	Workers  uint32
	// PerWorker also prints each worker's own report after the merged
	// one.
	PerWorker bool
}

// runSpec is the run of a command: its one phase; the interval is
// --report-interval's, and the workers print none of their own (the
// client prints them from the merged intervals).
func runSpec(cl *oltp.CommandLine) (*writepathv1.RunSpec, error) {
	local := proto.Clone(cl.Spec).(*oltpv1.Spec)
	local.ReportIntervalSeconds = 0
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(local)
	if err != nil {
		return nil, err
	}
	rs := &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: oltp.Kind, Value: b}, Phases: []string{cl.Command},
		Name: "sysbench " + cl.Command}
	if n := cl.Spec.GetReportIntervalSeconds(); n > 0 {
		rs.Interval = durationpb.New(time.Duration(n) * time.Second)
	}
	return rs, nil
}

// run submits the command's run, prints the merged interval lines as they
// come, then the phase's lines and report.
func (f *Fabric) run(ctx context.Context, cl *oltp.CommandLine, rs *writepathv1.RunSpec, text *oltp.Text) int {
	s := cl.Spec
	interval := s.GetReportIntervalSeconds()
	rs.Selector, rs.Workers = f.Selector, f.Workers
	lines := &liveLines{text: text, pct: s.GetPercentile(), interval: time.Duration(interval) * time.Second, rate: s.GetRate() > 0}
	if cl.Command == oltp.PhaseRun {
		lines.header = func(workers int) {
			runMode(text, cl, workers)
			text.Printf(oltp.LevelNotice, "Initializing worker threads...\n")
		}
	}
	run, err := f.Client.Run(ctx, rs, lines.event)
	if run == nil {
		text.Printf(oltp.LevelFatal, "%v", err)
		return exitFailed
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	detail, gerr := results.Read(rctx, f.Client, run.GetId(), results.MergedOnly)
	if gerr != nil {
		text.Printf(oltp.LevelFatal, "%v", gerr)
		return exitFailed
	}
	return f.report(cl, text, detail, err)
}

// liveLines prints sysbench's interval line for each merged interval of
// the run phase, and "Threads started!" when the phase starts.
type liveLines struct {
	text     *oltp.Text
	pct      float64
	interval time.Duration
	started  bool
	elapsed  time.Duration
	// rate: a --rate run, whose intervals have sysbench's queue line too.
	rate bool
	// header, if set, prints the run's header once its workers are known
	// (its threads are theirs together).
	header func(workers int)
}

func (l *liveLines) event(ev *writepathv1.WatchRunResponse) {
	if r := ev.GetRun(); r != nil {
		if n := len(r.GetWorkers()); n > 0 && l.header != nil {
			l.header(n)
			l.header = nil
		}
		for _, ph := range r.GetPhases() {
			if ph.GetName() == oltp.PhaseRun && ph.GetState() >= writepathv1.PhaseState_PHASE_STATE_STARTED && !l.started {
				l.started = true
				l.text.Printf(oltp.LevelNotice, "Threads started!\n")
			}
		}
		return
	}
	mi := ev.GetInterval()
	if mi == nil || mi.GetPhase() != oltp.PhaseRun || l.interval <= 0 {
		return
	}
	span := mi.GetEnd().AsTime().Sub(mi.GetStart().AsTime())
	if mi.GetSeconds() < l.interval.Seconds()*0.99 {
		return // the last, partial interval: sysbench prints none
	}
	l.elapsed = time.Duration(mi.GetSeq()+1) * span
	c := mi.GetCounters()
	counts := oltp.Counts64{Transactions: c["transactions"], Writes: c["writes"], Other: c["other"],
		Errors: c["errors"], Reconnects: c["reconnects"]}
	var lat float64
	if l.pct > 0 {
		h, err := results.IntervalHistogram(mi, isTrx)
		if err != nil {
			// sysbench's line has no room for it: say so beside.
			l.text.Printf(oltp.LevelWarning, "interval %d: %v: its latency is shown as 0", mi.GetSeq(), err)
		} else {
			lat = float64(h.Percentile(l.pct)) / 1e6
		}
	}
	l.text.Log(oltp.Line{Level: oltp.LevelNotice, Stamped: true,
		Text: oltp.IntervalLine(l.elapsed.Seconds(), mi.GetSeconds(), int(mi.GetGauges()["threads"]), counts, int(l.pct), lat)})
	if q, ok := mi.GetGauges()[oltp.GaugeQueueLength]; ok && l.rate {
		// The workers' backlogs together: the merged run's queue.
		l.text.Log(oltp.Line{Level: oltp.LevelNotice, Stamped: true,
			Text: oltp.QueueLine(l.elapsed.Seconds(), q, mi.GetGauges()[oltp.GaugeConcurrency])})
	}
}

// report prints what the workers said of the phase: the lines of the one
// worker of a prepare, prewarm or cleanup; for run, the merged checkpoint
// reports and the merged report (then, with PerWorker, each worker's).
func (f *Fabric) report(cl *oltp.CommandLine, text *oltp.Text, detail *results.Run, runErr error) int {
	run := detail.Record
	var parts []*oltp.Summary
	var names []string
	var phaseErr error
	for _, ph := range run.GetPhases() {
		for _, pw := range ph.GetWorkers() {
			var rep oltp.PhaseReport
			if len(pw.GetSummary()) > 0 && json.Unmarshal(pw.GetSummary(), &rep) == nil {
				if cl.Command != oltp.PhaseRun {
					replay(text, rep.Lines)
				} else if rep.Run != nil {
					parts, names = append(parts, rep.Run), append(names, pw.GetWorker())
				}
			}
			if e := pw.GetError(); e != "" {
				if sb := sysbenchEnd(e); sb != nil {
					phaseErr = sb // sysbench's own ending wins over another worker's cancellation
				} else if phaseErr == nil {
					phaseErr = fmt.Errorf("worker %s: %s", pw.GetWorker(), e)
				}
			}
		}
		if ph.GetError() != "" && phaseErr == nil {
			phaseErr = errors.New(ph.GetError())
		}
	}
	status := exitOK
	switch run.GetState() {
	case writepathv1.RunState_RUN_STATE_FINISHED:
	case writepathv1.RunState_RUN_STATE_PARTIAL:
		text.Printf(oltp.LevelWarning, "run %s ended partial: workers lost: %v", run.GetId(), run.GetLost())
		status = 3
	default:
		if phaseErr == nil {
			phaseErr = fmt.Errorf("run %s %s: %s", run.GetId(), run.GetState(), run.GetReason())
		}
		if runErr != nil && errors.Is(runErr, context.Canceled) {
			phaseErr = context.Canceled
		}
	}
	var sum *oltp.Summary
	if len(parts) > 0 {
		var err error
		if sum, err = f.merge(cl, detail, parts); err != nil {
			text.Printf(oltp.LevelWarning, "run %s: %v: the latency percentiles are the largest worker's, not the merged ones", run.GetId(), err)
		}
	}
	if sum != nil {
		for _, cp := range sum.Checkpoints {
			text.Log(oltp.Line{Level: oltp.LevelNotice, Stamped: true, Text: oltp.CheckpointLine(cp.CheckpointSec)})
			cp.Report(text)
		}
	}
	if code := finish(text, sum, phaseErr); code != exitOK {
		return code
	}
	if f.PerWorker && len(parts) > 1 {
		for i, p := range parts {
			text.Printf(oltp.LevelNotice, "Worker %s:", names[i])
			p.Report(text)
		}
	}
	return status
}

// sysbenchEnd is the ending sysbench has its own words and exit status
// for (a full event queue, a forced shutdown) that a worker's error
// reports, or nil: through the fabric the run ends as sysbench's would,
// in its words ("FATAL: The event queue is full. ..."), not prefixed
// with the worker's name.
func sysbenchEnd(workerErr string) error {
	for _, e := range []error{oltp.ErrQueueFull, oltp.ErrForcedShutdown} {
		if strings.Contains(workerErr, e.Error()) {
			return e
		}
	}
	return nil
}

// replay prints a worker's messages (not its reports: those are merged).
func replay(text *oltp.Text, lines []oltp.Line) {
	for _, ln := range lines {
		if !ln.Stamped {
			text.Log(ln)
		}
	}
}

// merge combines the workers' summaries; the percentiles come from the
// merged intervals of the run phase (the warm-up's and each checkpoint's
// window left out). When the intervals cannot be merged (a stored
// histogram that does not decode or overflows) it says why and the
// summary falls back to the largest worker's percentiles.
func (f *Fabric) merge(cl *oltp.CommandLine, detail *results.Run, parts []*oltp.Summary) (*oltp.Summary, error) {
	warm := float64(cl.Spec.GetWarmupSeconds())
	var cps []*hist.Histogram
	from := warm
	for _, c := range cl.Spec.GetReportCheckpoints() {
		h, err := window(detail, from, float64(c))
		if err != nil {
			return oltp.MergeSummaries(parts, nil, nil), err
		}
		cps = append(cps, h)
		from = math.Max(from, float64(c))
	}
	h, err := window(detail, from, math.Inf(1))
	if err != nil {
		return oltp.MergeSummaries(parts, nil, nil), err
	}
	return oltp.MergeSummaries(parts, h, cps), nil
}

// window merges the run phase's trx histograms of the intervals lying in
// [from, to) seconds from the phase start; nil when none has any.
func window(detail *results.Run, from, to float64) (*hist.Histogram, error) {
	var at time.Time
	for _, ph := range detail.Record.GetPhases() {
		if ph.GetName() == oltp.PhaseRun && ph.GetAt() != nil {
			at = ph.GetAt().AsTime()
		}
	}
	var out *hist.Histogram
	for _, mi := range detail.Intervals {
		if mi.GetPhase() != oltp.PhaseRun || !slices.ContainsFunc(mi.GetOps(), func(o *writepathv1.OpHistogram) bool { return isTrx(o.GetOp()) }) {
			continue
		}
		s, e := mi.GetStart().AsTime().Sub(at).Seconds(), mi.GetEnd().AsTime().Sub(at).Seconds()
		if s < from-1e-3 || (e > to+1e-3 && !math.IsInf(to, 1)) {
			continue
		}
		h, err := results.IntervalHistogram(mi, isTrx)
		if err != nil {
			return nil, fmt.Errorf("interval %d of phase %s: %w", mi.GetSeq(), oltp.PhaseRun, err)
		}
		if out == nil {
			out = h
		} else if err := out.Merge(h); err != nil {
			return nil, fmt.Errorf("merging interval %d of phase %s: %w", mi.GetSeq(), oltp.PhaseRun, err)
		}
	}
	return out, nil
}

func isTrx(op string) bool { return op == "trx" }
