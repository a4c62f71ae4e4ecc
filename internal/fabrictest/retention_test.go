package fabrictest_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestRetentionDropsOldWorkerIntervals: with --keep-worker-intervals=1 the
// coordinator, after the second run, drops the first run's per-worker
// snapshots, keeps its merged intervals, stamps it, and `runs show` says so.
func TestRetentionDropsOldWorkerIntervals(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Coordinator: coordinator.Config{KeepWorkerIntervals: 1}})
	spec := testkind.Spec{Ops: 500, Duration: 300 * time.Millisecond, Seed: 3, BlockSize: 4096}
	first := submitAndWait(t, f, fabrictest.SynthSpec(spec))
	if len(first.GetWorkerIntervals()) == 0 {
		t.Fatal("the newest run has no worker intervals; retention must keep them")
	}
	merged := len(first.GetIntervals())
	second := submitAndWait(t, f, fabrictest.SynthSpec(spec))
	if len(second.GetWorkerIntervals()) == 0 {
		t.Fatal("second run: no worker intervals")
	}
	// Retention runs just after the run ends; give it a moment.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got *writepathv1.GetRunResponse
	for {
		var err error
		got, err = f.Control().GetRun(ctx, &writepathv1.GetRunRequest{RunId: first.GetRun().GetId(), Intervals: true, WorkerIntervals: true})
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
	if len(got.GetIntervals()) != merged {
		t.Errorf("first run: %d merged intervals after pruning; want the %d it had", len(got.GetIntervals()), merged)
	}
	sum, err := client.Summarize(got)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := client.WriteSummary(&out, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "per-worker intervals pruned") || !strings.Contains(out.String(), "pruned") {
		t.Errorf("summary of a pruned run does not say so:\n%s", out.String())
	}
}
