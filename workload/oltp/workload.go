package oltp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

// Kind is the type URL of the spec message.
const Kind = "type.googleapis.com/writepath.oltp.v1.Spec"

// Phase names.
const (
	PhasePrepare = "prepare"
	PhasePrewarm = "prewarm"
	PhaseRun     = "run"
	PhaseCleanup = "cleanup"
)

func init() {
	workload.Register(workload.Meta{
		Name:        "oltp",
		Kind:        Kind,
		Description: "sysbench 1.0.20 oltp_write_only, statement for statement",
		Phases: []workload.Phase{
			{Name: PhasePrepare, Placement: workload.One},
			{Name: PhasePrewarm, Placement: workload.One, OnRequest: true},
			{Name: PhaseRun, Placement: workload.All, Measured: true},
			{Name: PhaseCleanup, Placement: workload.One},
		},
		New:      New,
		FromArgs: FromArgs,
		Help:     Help,
		Local:    Sandbox,
		FrontEnd: &workload.FrontEnd{Name: "sysbench", Takes: sysbenchOrder},
		Secrets:  Secrets(),
		Tables:   tables(),
	})
}

// Secrets are the oltp options that must never be stored with a run:
// --mysql-password, whose twin --mysql-password-file names a file on the
// worker (workload.Meta.Secrets; the crash kind's load takes it too).
func Secrets() []workload.Secret {
	return []workload.Secret{{Option: "mysql-password", File: "mysql-password-file", What: "password"}}
}

// sysbenchOrder reports whether oltp arguments are in sysbench's order:
// a test name (oltp_write_only, or a path to its script) among them.
func sysbenchOrder(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "--") && IsWriteOnly(a) {
			return true
		}
	}
	return false
}

// Workload is one decoded oltp spec.
type Workload struct {
	// Spec is the decoded spec; Options its resolved form.
	Spec    *oltpv1.Spec
	Options Options

	// Text, if set, is where phases print sysbench's lines as they come
	// (writepath sysbench); a worker's phases keep them for the summary.
	Text *Text
	// NoStatus: see Options.NoStatus.
	NoStatus bool

	mu struct {
		sync.Mutex
		reports map[string]*PhaseReport // by phase
		pre     []*session              // SetUp's connections, until Run takes them
	}
}

var (
	_ workload.Workload   = (*Workload)(nil)
	_ workload.Summarizer = (*Workload)(nil)
	_ workload.Early      = (*Workload)(nil)
)

// Early reports that the run phase sets up before the common start: its
// connections log in and prepare their statements, as sysbench's threads
// do before the first event, so that the first interval is the load's.
func (w *Workload) Early(phase string) bool { return phase == PhaseRun }

// New decodes and validates a marshalled Spec.
func New(spec []byte) (workload.Workload, error) {
	s := &oltpv1.Spec{}
	if err := proto.Unmarshal(spec, s); err != nil {
		return nil, fmt.Errorf("oltp spec: %w", err)
	}
	return NewFromSpec(s)
}

// NewFromSpec validates s and returns its Workload.
func NewFromSpec(s *oltpv1.Spec) (*Workload, error) {
	if err := checkLimits(s); err != nil {
		return nil, fmt.Errorf("oltp spec: %w", err)
	}
	o, err := Resolve(s)
	if err != nil {
		return nil, fmt.Errorf("oltp spec: %w", err)
	}
	w := &Workload{Spec: s, Options: o}
	w.mu.reports = map[string]*PhaseReport{}
	return w, nil
}

// PhaseReport is what a phase of this kind reports (its Summarizer
// output, as JSON): sysbench's lines and, for run, the statistics.
type PhaseReport struct {
	Phase string   `json:"phase"`
	Lines []Line   `json:"lines,omitempty"`
	Run   *Summary `json:"run,omitempty"`
}

// runPhase executes one phase against the server the spec connects to
// (Run, in managed.go, first readies a managed server).
func (w *Workload) runPhase(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	o := w.Options
	o.Text, o.NoStatus = w.Text, w.NoStatus
	if phase == PhaseRun {
		o.pre = w.takeSessions()
	} else {
		closeSessions(w.takeSessions())
	}
	if o.Text == nil {
		o.Text = NewText(nil, Output{Verbosity: int(LevelNotice)})
		o.Text.mirror = func(ln Line) {
			switch {
			case ln.Stamped && strings.HasPrefix(ln.Text, "[ ") && env.Progress != nil:
				fmt.Fprintln(env.Progress, ln.Text) // --report-interval lines, on the worker's terminal
			case ln.Level <= LevelNotice && !ln.Stamped:
				env.Logger().Info(strings.TrimSpace(ln.Text))
			}
		}
	}
	rep := &PhaseReport{Phase: phase}
	defer func() {
		rep.Lines = o.Text.Lines()
		w.mu.Lock()
		w.mu.reports[phase] = rep
		w.mu.Unlock()
	}()
	switch phase {
	case PhasePrepare:
		return Prepare(ctx, o, env)
	case PhasePrewarm:
		return Prewarm(ctx, o, env)
	case PhaseCleanup:
		return Cleanup(ctx, o, env)
	case PhaseRun:
		sum, err := Run(ctx, o, env, rec)
		rep.Run = sum
		return err
	}
	return fmt.Errorf("oltp: unknown phase %q (want prepare, prewarm, run or cleanup)", phase)
}

// Summary returns a phase's PhaseReport as JSON (nothing for a phase that
// did not run).
func (w *Workload) Summary(phase string) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.mu.reports[phase]
	if !ok {
		return nil, nil
	}
	return json.Marshal(r)
}

// RunSummary returns the structured summary of the last run phase.
func (w *Workload) RunSummary() *Summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.mu.reports[PhaseRun]; r != nil {
		return r.Run
	}
	return nil
}
