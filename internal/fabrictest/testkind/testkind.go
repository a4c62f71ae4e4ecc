// Package testkind registers "synth", a synthetic workload kind for fabric
// tests: it records a deterministic set of latencies (see Samples) spread
// over a duration, without touching disks, so tests can compare what the
// fabric merged with the exact union of what every shard recorded.
//
// Only tests, and binaries built with the fabrictest tag, import it.
package testkind

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/writepath/writepath/workload"
)

// Kind is the spec's type URL: the spec is a google.protobuf.Struct.
const Kind = "type.googleapis.com/google.protobuf.Struct"

// Spec is the synth kind's options.
type Spec struct {
	Ops       int           // operations per shard in the load phase
	Duration  time.Duration // over which they are spread
	Seed      int64
	BlockSize int64  // bytes per operation, counted in "write_bytes"
	Fail      string // if set, the load phase fails with this text
	Reject    bool   // if set, New refuses the spec (a worker-side refusal)
	IgnoreCtx bool   // if set, the load phase ignores cancellation (a hung worker)
	// Early makes the load phase a workload.Early one: its Run is called
	// before the common start, waits for it, and counts in "ahead_us" how
	// long before the start it was called.
	Early bool
	// SetUp makes the load phase a workload.SetUpper taking this long (or
	// failing with SetUpFail): its Run counts in "start_before_setup"
	// whether the common start came before the set-up ended, and in
	// "set_up" that it was set up.
	SetUp     time.Duration
	SetUpFail string
}

func init() {
	workload.Register(workload.Meta{
		Name: "synth", Kind: Kind, Description: "synthetic deterministic latencies (tests only)",
		Phases: []workload.Phase{
			{Name: "setup", Placement: workload.One},
			{Name: "load", Placement: workload.All, Measured: true},
		},
		New:      newWorkload,
		FromArgs: FromArgs,
		// Its own unit and columns, so that tests see the readers take
		// a kind's tables from its Meta, not from its name.
		Tables: workload.Tables{Unit: "ops", Columns: []string{"throughput", "MB/s", "p99", "delta"}},
	})
}

// Marshal encodes a spec as the kind's wire bytes.
func (s Spec) Marshal() []byte {
	st, _ := structpb.NewStruct(map[string]any{
		"ops": s.Ops, "duration_ms": float64(s.Duration.Milliseconds()), "seed": s.Seed,
		"block_size": s.BlockSize, "fail": s.Fail, "reject": s.Reject, "ignore_ctx": s.IgnoreCtx,
		"early": s.Early, "setup_ms": float64(s.SetUp.Milliseconds()), "setup_fail": s.SetUpFail,
	})
	b, _ := proto.Marshal(st) // cannot fail: only numbers, strings and bools
	return b
}

// FromArgs parses --ops N --duration D --seed N --block-size N --fail TEXT --reject.
func FromArgs(args []string) ([]byte, error) {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s Spec
	fs.IntVar(&s.Ops, "ops", 1000, "operations per worker")
	fs.DurationVar(&s.Duration, "duration", time.Second, "length of the load phase")
	fs.Int64Var(&s.Seed, "seed", 1, "random seed")
	fs.Int64Var(&s.BlockSize, "block-size", 4096, "bytes per operation")
	fs.StringVar(&s.Fail, "fail", "", "fail the load phase with this message")
	fs.BoolVar(&s.Reject, "reject", false, "refuse the spec on the worker")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s.Marshal(), nil
}

func (s Spec) validate() error {
	var errs []error
	if s.Ops < 0 {
		errs = append(errs, fmt.Errorf("ops %d: must be >= 0", s.Ops))
	}
	if s.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration %v: must be > 0", s.Duration))
	}
	if s.BlockSize < 0 {
		errs = append(errs, fmt.Errorf("block-size %d: must be >= 0", s.BlockSize))
	}
	if len(errs) > 0 {
		return fmt.Errorf("synth: %w", errors.Join(errs...))
	}
	return nil
}

func decode(b []byte) (Spec, error) {
	st := &structpb.Struct{}
	if err := proto.Unmarshal(b, st); err != nil {
		return Spec{}, fmt.Errorf("synth: spec: %w", err)
	}
	f := st.GetFields()
	s := Spec{
		Ops: int(f["ops"].GetNumberValue()), Duration: time.Duration(f["duration_ms"].GetNumberValue()) * time.Millisecond,
		Seed: int64(f["seed"].GetNumberValue()), BlockSize: int64(f["block_size"].GetNumberValue()),
		Fail: f["fail"].GetStringValue(), Reject: f["reject"].GetBoolValue(), IgnoreCtx: f["ignore_ctx"].GetBoolValue(),
		Early: f["early"].GetBoolValue(), SetUp: time.Duration(f["setup_ms"].GetNumberValue()) * time.Millisecond,
		SetUpFail: f["setup_fail"].GetStringValue(),
	}
	return s, s.validate()
}

func newWorkload(b []byte) (workload.Workload, error) {
	s, err := decode(b)
	if err != nil {
		return nil, err
	}
	if s.Reject {
		return nil, errors.New("synth: spec refused on this worker (reject is set)")
	}
	return &synth{spec: s}, nil
}

// Samples returns the latencies (ns) shard records, in order: log-uniform
// between 10 µs and 100 ms, deterministic from seed and shard.
func Samples(seed int64, shard, n int) []int64 {
	next := sampler(seed, shard)
	out := make([]int64, n)
	for i := range out {
		out[i] = next()
	}
	return out
}

// sampler yields Samples one at a time, so a long phase neither holds them
// all nor delays a cancel while generating them.
func sampler(seed int64, shard int) func() int64 {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(shard)))
	return func() int64 { return int64(1e4 * math.Pow(1e4, rng.Float64())) }
}

type synth struct {
	spec      Spec
	done      int
	setUpDone time.Time // when SetUp returned (zero: no set-up)
}

var (
	_ workload.Summarizer = (*synth)(nil)
	_ workload.Early      = (*synth)(nil)
	_ workload.SetUpper   = (*synth)(nil)
)

// SetUp takes the spec's SetUp for the load phase, or fails with SetUpFail.
func (s *synth) SetUp(ctx context.Context, phase string, env workload.Env) error {
	if phase != "load" || s.spec.SetUp == 0 && s.spec.SetUpFail == "" {
		return nil
	}
	if sleepCtx(ctx, s.spec.SetUp); ctx.Err() != nil {
		return ctx.Err()
	}
	if s.spec.SetUpFail != "" {
		return errors.New(s.spec.SetUpFail)
	}
	s.setUpDone = time.Now()
	return nil
}

// Early is the spec's Early for the load phase.
func (s *synth) Early(phase string) bool { return s.spec.Early && phase == "load" }

// Run records the shard's samples evenly over the duration in 5 ms steps.
func (s *synth) Run(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	if phase != "load" {
		return sleepCtx(ctx, 10*time.Millisecond)
	}
	if ahead := time.Until(env.Start); s.Early(phase) && ahead > 0 {
		rec.Counter("ahead_us").Add(ahead.Microseconds())
		if sleepCtx(ctx, ahead); ctx.Err() != nil {
			return nil
		}
	}
	if !s.setUpDone.IsZero() {
		rec.Counter("set_up").Add(1)
		if env.Start.Before(s.setUpDone) {
			rec.Counter("start_before_setup").Add(1)
		}
	}
	next := sampler(s.spec.Seed, env.Shard.Index)
	h := rec.Handle("write")
	bytes := rec.Counter("write_bytes")
	rec.Gauge("threads").Set(1)
	start := time.Now()
	for s.done < s.spec.Ops {
		if ctx.Err() != nil && !s.spec.IgnoreCtx {
			return nil
		}
		frac := min(float64(time.Since(start))/float64(s.spec.Duration), 1)
		for due := int(frac * float64(s.spec.Ops)); s.done < due; s.done++ {
			h.Record(next())
			bytes.Add(s.spec.BlockSize)
		}
		if s.done < s.spec.Ops {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if s.spec.Fail != "" {
		return errors.New(s.spec.Fail)
	}
	return nil
}

func (s *synth) Summary(phase string) ([]byte, error) {
	return json.Marshal(map[string]any{"phase": phase, "ops": s.done})
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return nil
}
