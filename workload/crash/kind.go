package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	crashv1 "github.com/writepath/writepath/proto/writepath/crash/v1"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

// Kind is the type URL of the crash spec.
const Kind = "type.googleapis.com/writepath.crash.v1.Spec"

// PhaseRounds is the crash kind's one phase, placed on the worker that
// manages the server.
const PhaseRounds = "rounds"

func init() {
	workload.Register(workload.Meta{
		Name:        "crash",
		Kind:        Kind,
		Description: "crash-recovery timing: OLTP load, kill -9, restart, recovery timeline, durability ledger",
		Phases:      []workload.Phase{{Name: PhaseRounds, Placement: workload.One, Measured: true}},
		New:         New,
		FromArgs:    FromArgs,
		Help:        Help,
		Figures:     Figures,
		Timeline:    Timelines,
		Text:        SummaryText,
		Secrets:     oltp.Secrets(), // the load's options are oltp's
		// Its load's transactions; a campaign cell's recovery figures,
		// lost commits, verdict and the load's own tps and p99 up to each
		// kill, with the delta of recovery time.
		Tables: workload.Tables{Txn: true, Columns: []string{"recovery", "start>query", "kill>commit", "lost", "verdict",
			"load tps", "load p99", "delta recovery"}},
	})
}

// Workload is a decoded, validated crash spec.
type Workload struct {
	spec *crashv1.Spec
	mu   struct {
		sync.Mutex
		result *Result // the last Run's result
	}
}

var (
	_ workload.Workload   = (*Workload)(nil)
	_ workload.Summarizer = (*Workload)(nil)
)

// New decodes and validates a marshalled Spec, reporting every problem
// (the registry's constructor).
func New(b []byte) (workload.Workload, error) {
	spec := &crashv1.Spec{}
	if err := proto.Unmarshal(b, spec); err != nil {
		return nil, fmt.Errorf("crash spec: %w", err)
	}
	return NewFromSpec(spec)
}

// NewFromSpec validates spec and returns its Workload, as oltp's
// NewFromSpec does.
func NewFromSpec(spec *crashv1.Spec) (*Workload, error) {
	if err := workload.CheckSpec(spec); err != nil {
		return nil, fmt.Errorf("crash spec: %w", err)
	}
	if _, err := resolve(spec); err != nil {
		return nil, fmt.Errorf("crash spec: %w", err)
	}
	return &Workload{spec: spec}, nil
}

// Run executes the rounds phase. The load's intervals stream through rec
// (operation "trx", counters, the LSN and checkpoint-age gauges).
func (w *Workload) Run(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	if phase != PhaseRounds {
		return fmt.Errorf("crash: unknown phase %q (the crash kind has one phase, %q)", phase, PhaseRounds)
	}
	res, err := w.Rounds(ctx, env, rec)
	w.mu.Lock()
	w.mu.result = &res
	w.mu.Unlock()
	return err
}

// Rounds runs every round and returns the result (also when some rounds
// failed; err is set when all did or ctx ended).
func (w *Workload) Rounds(ctx context.Context, env workload.Env, rec *workload.Recorder) (Result, error) {
	cfg, err := resolve(w.spec)
	if err != nil {
		return Result{}, fmt.Errorf("crash spec: %w", err)
	}
	// The worker's guard (guard.go) before anything else; the harness uses
	// exactly what it resolved.
	checked, err := checkSpec(w.spec, env)
	if err != nil {
		return Result{}, err
	}
	if w.spec.GetServer().GetDir() != "" {
		if err := checked.Dir.MkdirAll(0o755); err != nil {
			return Result{}, fmt.Errorf("crash: %w", err)
		}
	}
	cfg.useChecked(checked)
	return newHarness(cfg, env, rec).Run(ctx)
}

// Result returns the last Run's result; false before any.
func (w *Workload) Result() (Result, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.result == nil {
		return Result{}, false
	}
	return *w.mu.result, true
}

// Summary returns the last result as JSON: every round with its timeline
// and matched error-log lines, and the median/min/max.
func (w *Workload) Summary(phase string) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if phase != PhaseRounds || w.mu.result == nil {
		return nil, fmt.Errorf("crash: no result for phase %q", phase)
	}
	return json.Marshal(w.mu.result)
}
