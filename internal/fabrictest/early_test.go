package fabrictest_test

import (
	"testing"
	"time"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestEarlyPhaseSetsUpBeforeTheStart: a workload.Early phase is run before
// the common start (it sets up in the start margin), measures from the
// start as any other, and a phase that is not Early is run at the start.
func TestEarlyPhaseSetsUpBeforeTheStart(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Coordinator: coordinator.Config{StartMargin: 300 * time.Millisecond}})
	for _, early := range []bool{true, false} {
		spec := testkind.Spec{Ops: 500, Duration: 200 * time.Millisecond, Seed: 3, Early: early}
		got := submitAndWait(t, f, fabrictest.SynthSpec(spec))
		if st := got.GetRun().GetState(); st != writepathv1.RunState_RUN_STATE_FINISHED {
			t.Fatalf("early=%v: state %v (%s)", early, st, got.GetRun().GetReason())
		}
		var ahead, ops int64
		for _, mi := range got.GetIntervals() {
			ahead += mi.GetCounters()["ahead_us"]
		}
		merged, _ := mergeOp(t, got.GetIntervals(), "write")
		ops = merged.Count()
		if ops != 2*500 {
			t.Errorf("early=%v: %d writes merged; want 1000", early, ops)
		}
		switch {
		case early && ahead <= 0:
			t.Errorf("early phase: Run was not called before the common start (ahead_us %d)", ahead)
		case !early && ahead != 0:
			t.Errorf("phase that is not early: Run called %d us before the start; want at it", ahead)
		}
	}
}
