package fabrictest_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/results"
)

// TestRetentionDropsOldWorkerIntervals: with --keep-worker-intervals=1 the
// coordinator, after the second run, drops the first run's per-worker
// snapshots, keeps its merged intervals and its per-worker totals, stamps
// it, and `runs show` says so and still shows each worker's totals.
func TestRetentionDropsOldWorkerIntervals(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Coordinator: coordinator.Config{KeepWorkerIntervals: 1}})
	spec := testkind.Spec{Ops: 500, Duration: 300 * time.Millisecond, Seed: 3, BlockSize: 4096}
	first := submitAndWait(t, f, fabrictest.SynthSpec(spec))
	if len(first.GetWorkerIntervals()) == 0 || len(first.WorkerTotals) != 2 {
		t.Fatalf("the newest run has %d worker intervals, %d totals; retention must keep them", len(first.GetWorkerIntervals()), len(first.WorkerTotals))
	}
	merged := len(first.GetIntervals())
	second := submitAndWait(t, f, fabrictest.SynthSpec(spec))
	if len(second.GetWorkerIntervals()) == 0 {
		t.Fatal("second run: no worker intervals")
	}
	// Retention runs just after the run ends; give it a moment.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got *fabrictest.Stored
	for {
		var err error
		got, err = fabrictest.ReadStored(ctx, f.Control(), first.GetRun().GetId(), true)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetRun().GetWorkerIntervalsPruned() != nil || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.GetRun().GetWorkerIntervalsPruned() == nil || len(got.GetWorkerIntervals()) != 0 {
		t.Fatalf("first run: pruned stamp %v, %d worker intervals; want pruned", got.GetRun().GetWorkerIntervalsPruned(), len(got.GetWorkerIntervals()))
	}
	if len(got.GetIntervals()) != merged || len(got.WorkerTotals) != 2 {
		t.Errorf("first run: %d merged intervals, %d worker totals after pruning; want the %d and 2 it had", len(got.GetIntervals()), len(got.WorkerTotals), merged)
	}
	r, err := results.Read(ctx, client.New(f.Control()), first.GetRun().GetId(), results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := client.Summarize(r, client.Kind{})
	if err != nil {
		t.Fatal(err)
	}
	load := sum.Phases[len(sum.Phases)-1]
	if n := load.Workers[0].Ops[0].Count + load.Workers[1].Ops[0].Count; n != load.Merged.Ops[0].Count || n != 2*int64(spec.Ops) {
		t.Errorf("pruned run: workers' totals sum to %d, merged %d; want %d", n, load.Merged.Ops[0].Count, 2*spec.Ops)
	}
	var out bytes.Buffer
	if err := client.WriteSummary(&out, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "per-worker intervals pruned") || !strings.Contains(out.String(), "phase totals") ||
		!regexp.MustCompile(`worker-2\s+write\s+500\s`).MatchString(out.String()) {
		t.Errorf("summary of a pruned run does not say so, or lacks the workers' totals:\n%s", out.String())
	}
}
