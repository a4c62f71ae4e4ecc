package worker

import (
	"maps"
	"time"

	"github.com/writepath/writepath/hist"
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
	// since StartTrace), valid until the next call, and counters of values
	// the tracer could not keep.
	TraceTick() (map[string]*hist.Histogram, map[string]int64, error)
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

// traceInterval adds the tracer's series to an interval's ops (encoded by
// the caller) and its counters, following what the workload names first.
func (s *session) traceInterval(p *phase, tr PhaseTrace, ops map[string]*hist.Histogram, counters map[string]int64) (map[string]*hist.Histogram, map[string]int64) {
	if tr == nil {
		return ops, counters
	}
	s.follow(p)
	tops, tcounters, err := tr.TraceTick()
	if err != nil {
		s.w.cfg.Log.Warn("block tracing: read", "run", p.runID, "phase", p.name, "err", err)
	}
	if len(tops) == 0 && len(tcounters) == 0 {
		return ops, counters
	}
	all := make(map[string]*hist.Histogram, len(ops)+len(tops))
	maps.Copy(all, tops)
	maps.Copy(all, ops) // a workload op never loses to a series of the same name
	if len(tcounters) > 0 {
		c := make(map[string]int64, len(counters)+len(tcounters))
		maps.Copy(c, tcounters)
		maps.Copy(c, counters)
		counters = c
	}
	return all, counters
}
