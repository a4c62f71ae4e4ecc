package worker

import (
	"maps"

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

// traceInterval adds the tracer's series to an interval's ops (encoded by
// the caller) and its counters, following what the workload names first.
func (s *session) traceInterval(p *phase, tr PhaseTrace, ops map[string]*hist.Histogram, counters map[string]int64) (map[string]*hist.Histogram, map[string]int64) {
	if tr == nil {
		return ops, counters
	}
	if t, ok := p.wl.(workload.Traced); ok {
		if err := tr.Follow(t.TraceTargets()); err != nil {
			s.w.cfg.Log.Warn("block tracing: follow", "run", p.runID, "phase", p.name, "err", err)
		}
	}
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
