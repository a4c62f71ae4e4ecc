package worker

import (
	"maps"
	"slices"
	"time"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"

	"github.com/writepath/writepath/workload"
)

// Tracer attaches kernel tracing (package telemetry/blocktrace, wired by
// the command) for one measured phase. Its series travel as extra ops of
// each interval and merge exactly like the workload's.
type Tracer interface {
	StartTrace() (PhaseTrace, error)
}

// PhaseTrace is one phase's tracing; only the phase's interval goroutine
// calls it.
type PhaseTrace interface {
	// Follow sets the processes and redo files the workload names now.
	Follow(t workload.TraceTargets) error
	// TraceTick returns the series since the previous call (the first:
	// since StartTrace), each in package hist's encoding and valid until
	// the next call, and counters of values the tracer could not keep.
	TraceTick() (map[string][]byte, map[string]int64, error)
	Close() error
}

// phaseTrace starts tracing for a measured phase; a tracer that cannot
// start is logged once and the phase runs without it.
func (s *session) phaseTrace(p *phase) PhaseTrace {
	if s.w.cfg.Tracer == nil || !p.measured {
		return nil
	}
	tr, err := s.w.cfg.Tracer.StartTrace()
	if err != nil {
		s.w.cfg.Log.Info("block tracing off for this phase", "run", p.runID, "phase", p.name, "err", err)
		return nil
	}
	return tr
}

// followPeriod is how often the worker asks a Traced workload for its
// processes until it names some: a managed server started by the phase is
// then followed within this long, not from the next interval on.
const followPeriod = 100 * time.Millisecond

// followPoll returns a channel that ticks every followPeriod while the
// phase is traced and its workload is Traced (nil otherwise), and its stop.
func (s *session) followPoll(p *phase) (<-chan time.Time, func()) {
	if _, ok := p.wl.(workload.Traced); !ok || p.trace == nil {
		return nil, func() {}
	}
	tk := time.NewTicker(followPeriod)
	return tk.C, tk.Stop
}

// follow hands the tracer what the workload names now; it reports whether
// that named any process.
func (s *session) follow(p *phase) bool {
	t, ok := p.wl.(workload.Traced)
	if !ok || p.trace == nil {
		return false
	}
	targets := t.TraceTargets(s.w.cfg.env())
	if err := p.trace.Follow(targets); err != nil {
		s.w.cfg.Log.Warn("block tracing: follow", "run", p.runID, "phase", p.name, "err", err)
	}
	return len(targets.PIDs) > 0
}

// traceInterval returns the tracer's series for an interval (encoded) and
// its counters merged into the workload's, following what the workload
// names first.
func (s *session) traceInterval(p *phase, tr PhaseTrace, counters map[string]int64) (map[string][]byte, map[string]int64) {
	if tr == nil {
		return nil, counters
	}
	s.follow(p)
	tops, tcounters, err := tr.TraceTick()
	if err != nil {
		s.w.cfg.Log.Warn("block tracing: read", "run", p.runID, "phase", p.name, "err", err)
	}
	if len(tcounters) > 0 {
		c := make(map[string]int64, len(counters)+len(tcounters))
		maps.Copy(c, tcounters)
		maps.Copy(c, counters) // a workload counter never loses to the tracer's
		counters = c
	}
	return tops, counters
}

// appendTraced adds the tracer's encoded series to an interval's ops, in
// name order; a workload op of the same name keeps its place.
func appendTraced(ops []*writepathv1.OpHistogram, workloadOps map[string]*hist.Histogram, traced map[string][]byte) []*writepathv1.OpHistogram {
	for _, name := range slices.Sorted(maps.Keys(traced)) {
		if _, taken := workloadOps[name]; !taken {
			ops = append(ops, &writepathv1.OpHistogram{Op: name, Hdr: traced[name]})
		}
	}
	return ops
}
