package oltp

import (
	"context"
	"fmt"
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
			{Name: PhaseRun, Placement: workload.All, Measured: true},
			{Name: PhaseCleanup, Placement: workload.One},
		},
		New:      New,
		FromArgs: FromArgs,
	})
}

// Workload is one decoded oltp spec.
type Workload struct {
	// Spec is the decoded spec; Options its resolved form.
	Spec    *oltpv1.Spec
	Options Options

	mu struct {
		sync.Mutex
		summaries map[string]*Summary // by phase
	}
}

var (
	_ workload.Workload   = (*Workload)(nil)
	_ workload.Summarizer = (*Workload)(nil)
)

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
	o, err := Resolve(s)
	if err != nil {
		return nil, fmt.Errorf("oltp spec: %w", err)
	}
	w := &Workload{Spec: s, Options: o}
	w.mu.summaries = map[string]*Summary{}
	return w, nil
}

// runPhase executes one phase against the server the spec connects to
// (Run, in managed.go, first readies a managed server).
func (w *Workload) runPhase(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	switch phase {
	case PhasePrepare:
		return Prepare(ctx, w.Options, env)
	case PhaseCleanup:
		return Cleanup(ctx, w.Options, env)
	case PhaseRun:
		sum, err := Run(ctx, w.Options, env, rec)
		if sum != nil {
			w.mu.Lock()
			w.mu.summaries[phase] = sum
			w.mu.Unlock()
		}
		return err
	}
	return fmt.Errorf("oltp: unknown phase %q (want prepare, run or cleanup)", phase)
}

// Summary returns the run phase's summary in sysbench's text layout
// (nothing for prepare and cleanup).
func (w *Workload) Summary(phase string) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.mu.summaries[phase]
	if !ok {
		return nil, nil
	}
	return []byte(s.Text()), nil
}

// RunSummary returns the structured summary of the last run phase.
func (w *Workload) RunSummary() *Summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.summaries[PhaseRun]
}
