package fio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// Kind is the type URL of the fio spec.
const Kind = "type.googleapis.com/writepath.fio.v1.Spec"

// PhaseRun is fio's only phase: every job, on every selected worker.
const PhaseRun = "run"

func init() {
	workload.Register(workload.Meta{
		Name:        "fio",
		Kind:        Kind,
		Description: "fio-equivalent direct-IO jobs (fio options, job files, fio JSON)",
		Phases:      []workload.Phase{{Name: PhaseRun, Placement: workload.All, Measured: true}},
		New:         New,
		FromArgs:    fromArgs,
		Output:      outputFor,
		Help:        Help,
		Tables:      tables(),
	})
}

// Workload runs one fio Spec. Run may be called again; Summary and Report
// describe the last completed run.
type Workload struct {
	spec   *fiov1.Spec
	status *statusDump // SetStatus: the report so far, every so often
	// header (SetHeader) is where the normal output's header goes as the
	// jobs start, as fio prints it before they run.
	header io.Writer
	// etaFollows: the header's blank line is left to the ETA line, which
	// ends with it (fio prints none between them).
	etaFollows bool
	// log (SetFioLog) is where fio's own lines go as the jobs run.
	log *fioLog
	mu  struct {
		sync.Mutex
		res *result // last run's result; nil before the first run ends
	}
}

var (
	_ workload.Workload   = (*Workload)(nil)
	_ workload.Summarizer = (*Workload)(nil)
)

// result is what a run leaves for the report.
type result struct {
	version string // writepath's, from workload.Env
	start   time.Time
	clones  []*clone
	notes   []string
	// headed is how many of notes the header printed before the jobs ran
	// (-1: no header went out then).
	headed  int
	disks   []diskUtil
	elapsed time.Duration
}

func fromArgs(args []string) ([]byte, error) {
	spec, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(spec)
}

// New decodes and validates a marshalled Spec, reporting every problem
// (the registry's constructor).
func New(b []byte) (workload.Workload, error) {
	spec := &fiov1.Spec{}
	if err := proto.Unmarshal(b, spec); err != nil {
		return nil, fmt.Errorf("fio spec: %w", err)
	}
	return NewFromSpec(spec)
}

// NewFromSpec validates spec, reporting every problem at once, and
// returns a Workload that runs it, as oltp's and crash's NewFromSpec.
func NewFromSpec(spec *fiov1.Spec) (*Workload, error) {
	var errs []error
	if len(spec.Jobs) == 0 {
		errs = append(errs, errors.New("fio spec has no jobs"))
	}
	if errs = append(errs, checkLimits(spec)...); len(spec.Jobs) > MaxJobs {
		return nil, errors.Join(errs...)
	}
	errs = append(errs, runErrors(spec.Jobs)...)
	for _, j := range spec.Jobs {
		errs = append(errs, validateJob(j)...)
		if j.Rw == fiov1.ReadWrite_READ_WRITE_UNSPECIFIED || j.Ioengine == fiov1.IOEngine_IO_ENGINE_UNSPECIFIED ||
			j.Sync == fiov1.SyncMode_SYNC_MODE_UNSPECIFIED || j.Fallocate == fiov1.Fallocate_FALLOCATE_UNSPECIFIED {
			errs = append(errs, fmt.Errorf("job %s: %w: rw, ioengine, sync and fallocate must be set", j.Name, ErrInvalidValue))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Workload{spec: spec}, nil
}

// Spec returns the workload's spec (not to be modified).
func (w *Workload) Spec() *fiov1.Spec { return w.spec }

// Run runs every job's clones concurrently until they finish or ctx is
// done (then they stop within a second and Run returns ctx.Err()).
func (w *Workload) Run(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	if phase != PhaseRun {
		return fmt.Errorf("fio: unknown phase %q (fio has only %q)", phase, PhaseRun)
	}
	if rec == nil {
		rec = workload.NewRecorder(time.Now())
	}
	clones, notes, err := plan(w.spec, env)
	if err != nil {
		return err
	}
	res, err := execute(ctx, clones, notes, env, rec, w)
	if res != nil {
		res.version = env.Version
		w.mu.Lock()
		w.mu.res = res
		w.mu.Unlock()
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// last returns the last run's result.
func (w *Workload) last() (*result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.res == nil {
		return nil, errors.New("fio: no completed run to report")
	}
	return w.mu.res, nil
}
