package fabrictest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
)

// The golden store (cmd/writepath/testdata/results-golden/store.db) was made once, by
// TestMakeGoldenStore on the code before package results existed, so that
// TestResultsGolden can prove every reader still prints the same numbers
// from a store written by the old code. Remaking it would prove nothing:
// keep the file.

// goldenKind is the type URL of the "golden" kind, a deterministic kind with
// two ops, counters and InnoDB-like gauges (what the readers summarise). Its
// spec is a google.protobuf.Duration holding the seed in seconds: a type
// every binary links, so `runs show --json` can print the stored spec.
const goldenKind = "type.googleapis.com/google.protobuf.Duration"

func init() {
	workload.Register(workload.Meta{
		Name: "golden", Kind: goldenKind, Description: "deterministic ops and gauges for the results golden store (tests only)",
		Phases: []workload.Phase{
			{Name: "prepare", Placement: workload.One},
			{Name: "run", Placement: workload.All, Measured: true},
		},
		New: func(spec []byte) (workload.Workload, error) {
			d := &durationpb.Duration{}
			if err := proto.Unmarshal(spec, d); err != nil {
				return nil, fmt.Errorf("golden: spec: %w", err)
			}
			return goldenWorkload{seed: d.GetSeconds()}, nil
		},
		FromArgs: func(args []string) ([]byte, error) { return goldenSpec(int64(len(args) + 1)), nil },
	})
}

func goldenSpec(seed int64) []byte {
	b, _ := proto.Marshal(durationpb.New(time.Duration(seed) * time.Second)) // cannot fail
	return b
}

type goldenWorkload struct{ seed int64 }

// Run records 600 ms of writes and fsyncs in 10 ms steps.
func (g goldenWorkload) Run(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	if phase != "run" {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(g.seed), uint64(env.Shard.Index)))
	w, f := rec.Handle("write"), rec.Handle("fsync")
	bytes, trx := rec.Counter("write_bytes"), rec.Counter("other")
	dirty, age := rec.Gauge("innodb.pages_dirty"), rec.Gauge("innodb.checkpoint_age_bytes")
	rec.Gauge("threads").Set(2)
	for i := range 60 {
		if ctx.Err() != nil {
			return nil
		}
		for range 20 + rng.IntN(20) {
			w.Record(int64(20e3 * (1 + 30*rng.ExpFloat64()*rng.Float64())))
			bytes.Add(16384)
		}
		f.Record(int64(500e3 * (1 + rng.ExpFloat64())))
		trx.Add(1)
		dirty.Set(int64(100*i + rng.IntN(50)))
		age.Set(int64(i) << 20)
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// goldenTelemetry is a disk that writes a little more every sample.
func goldenTelemetry() worker.Telemetry {
	n := uint64(0)
	return worker.TelemetryFunc(func(time.Time) ([]worker.DeviceStats, map[string]float64) {
		n++
		return []worker.DeviceStats{{Device: "vda", Window: 100 * time.Millisecond, Delta: diskstats.Delta{
			WriteIOs: 40 + n, WriteMerges: n, WriteSectors: 320 * (n + 1), WriteTicks: 20 + 2*n,
			FlushIOs: 4, FlushTicks: 3, IOTicks: 60 + n, TimeInQueue: 90 + 3*n, Fields: 20}}}, nil
	})
}

// GoldenIDs names the runs and the campaign of the golden store.
type GoldenIDs struct {
	A, B, Pruned, Campaign string
}

// TestMakeGoldenStore writes the golden store into $WRITEPATH_MAKE_GOLDEN
// (a directory): runs A and B of the golden kind on three workers, an
// older one on two whose worker snapshots were pruned, and a 2-cell x
// 2-round synth campaign; ids.json names them.
func TestMakeGoldenStore(t *testing.T) {
	dir := os.Getenv("WRITEPATH_MAKE_GOLDEN")
	if dir == "" {
		t.Skip("set WRITEPATH_MAKE_GOLDEN=DIR to write a golden store (done once; see the comment above)")
	}
	raw := filepath.Join(t.TempDir(), "raw.db")
	cfg := local.Config{Workers: 3, DBPath: raw, CheckOnClose: true,
		Coordinator: coordinator.Config{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 3 * time.Second,
			Interval: 100 * time.Millisecond, StartMargin: 100 * time.Millisecond, MergeWait: 1500 * time.Millisecond,
			ReadyTimeout: 10 * time.Second, ValidateTimeout: 10 * time.Second, CancelGrace: 3 * time.Second},
		Worker: worker.Config{DataDir: t.TempDir(), Telemetry: goldenTelemetry()}}
	f, err := local.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.WaitWorkers(ctx, 3); err != nil {
		t.Fatal(err)
	}
	c := client.New(f.Control())
	var ids GoldenIDs
	ids.Pruned = goldenRun(ctx, t, c, &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: goldenKind, Value: goldenSpec(3)},
		Interval: durationpb.New(100 * time.Millisecond), Workers: 2})
	for i, id := range []*string{&ids.A, &ids.B} {
		*id = goldenRun(ctx, t, c, &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: goldenKind, Value: goldenSpec(int64(i + 1))},
			Interval: durationpb.New(100 * time.Millisecond)})
	}
	ids.Campaign = goldenCampaign(ctx, t, c)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PruneWorkerIntervals(6, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := store.Compact(filepath.Join(dir, "store.db"), raw); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(ids, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "ids.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func goldenRun(ctx context.Context, t *testing.T, c *client.Client, spec *writepathv1.RunSpec) string {
	t.Helper()
	run, err := c.Run(ctx, spec, nil)
	if err != nil || run.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("run = %v (%s), %v; want FINISHED", run.GetState(), run.GetReason(), err)
	}
	return run.GetId()
}

func goldenCampaign(ctx context.Context, t *testing.T, c *client.Client) string {
	t.Helper()
	text := []byte("name: golden\nworkload: fio\nmatrix:\n  --seed: [1, 2]\noptions: [--ops=500, --duration=500ms]\nrounds: 2\nwindow: 100ms-end\n")
	spec, err := campaign.Parse("golden.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := workload.ByName("synth")
	build := func(args []string) (*anypb.Any, error) {
		b, err := meta.FromArgs(args)
		return &anypb.Any{TypeUrl: meta.Kind, Value: b}, err
	}
	plan, err := client.Plan(spec, build, client.PlanOptions{File: "golden.yaml", Text: text, Interval: 100 * time.Millisecond,
		Kind: client.Kind{Unit: "iops"}}) // the spec's fio's unit, as the store holds
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.SubmitCampaign(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchCampaign(ctx, sub.GetId(), nil)
	if err != nil || final.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		t.Fatalf("campaign = %v (%s), %v; want FINISHED", final.GetState(), final.GetReason(), err)
	}
	return final.GetId()
}
