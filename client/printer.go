package client

import (
	"fmt"
	"io"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Printer writes a followed run as it goes: one line per merged interval
// and one per state change. Use its Event method as Run's onEvent.
type Printer struct {
	W io.Writer
	// Show selects telemetry columns (IOStat, InnoDB); Lines and Summary
	// are the caller's business.
	Show Show
	// Kind is what the run's kind declares (its transactions).
	Kind Kind
	run  *writepathv1.Run // the latest record seen
	// lines are the interval lines' formats, one per phase: a phase's
	// columns stay where they were.
	lines map[string]*Liner
}

// Event prints one watch event.
func (p *Printer) Event(ev *writepathv1.WatchRunResponse) {
	if r := ev.GetRun(); r != nil {
		if p.run == nil || p.run.GetState() != r.GetState() {
			fmt.Fprintf(p.W, "run %s: %s%s\n", r.GetId(), stateName(r.GetState()), reason(r))
		}
		p.run = r
		return
	}
	if mi := ev.GetInterval(); mi != nil {
		line := p.liner(mi.GetPhase()).Line(mi, p.phaseWorkers(mi.GetPhase()))
		fmt.Fprintln(p.W, line+TelemetryText(mi, p.Show)+TraceText(mi, p.Show))
	}
}

// liner returns the line format of a phase.
func (p *Printer) liner(phase string) *Liner {
	if p.lines == nil {
		p.lines = map[string]*Liner{}
	}
	l := p.lines[phase]
	if l == nil {
		l = &Liner{Txn: p.Kind.Txn, D: p.run.GetInterval().AsDuration()}
		p.lines[phase] = l
	}
	return l
}

// phaseWorkers is how many workers the phase was placed on.
func (p *Printer) phaseWorkers(phase string) int {
	for _, ph := range p.run.GetPhases() {
		if ph.GetName() == phase {
			return len(ph.GetWorkers())
		}
	}
	return 0
}

func reason(r *writepathv1.Run) string {
	if r.GetReason() == "" {
		return ""
	}
	return " (" + r.GetReason() + ")"
}
