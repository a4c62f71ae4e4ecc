package fabrictest_test

import (
	"strings"
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

// TestSetUpIsInsideTheStartBarrier: a workload.SetUpper's set-up, longer
// than the start margin, is done before the worker reports the phase
// ready, so the common start comes after every worker's set-up; a set-up
// that fails refuses the phase with its error.
func TestSetUpIsInsideTheStartBarrier(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Coordinator: coordinator.Config{StartMargin: 100 * time.Millisecond}})
	spec := testkind.Spec{Ops: 500, Duration: 200 * time.Millisecond, Seed: 3, Early: true, SetUp: 600 * time.Millisecond}
	got := submitAndWait(t, f, fabrictest.SynthSpec(spec))
	if st := got.GetRun().GetState(); st != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("state %v (%s)", st, got.GetRun().GetReason())
	}
	var late, setUp int64
	for _, mi := range got.GetIntervals() {
		late += mi.GetCounters()["start_before_setup"]
		setUp += mi.GetCounters()["set_up"]
	}
	if setUp != 2 {
		t.Errorf("%d workers ran SetUp; want 2", setUp)
	}
	if late != 0 {
		t.Errorf("%d workers were told a start before their set-up ended; want none", late)
	}
	if merged, _ := mergeOp(t, got.GetIntervals(), "write"); merged.Count() != 2*500 {
		t.Errorf("%d writes merged; want 1000", merged.Count())
	}

	spec.SetUpFail = "cannot connect: test"
	got = submitAndWait(t, f, fabrictest.SynthSpec(spec))
	if st := got.GetRun().GetState(); st == writepathv1.RunState_RUN_STATE_FINISHED || !strings.Contains(got.GetRun().GetReason(), "cannot connect: test") {
		t.Errorf("failing set-up: state %v, reason %q; want the run refused with the set-up's error", st, got.GetRun().GetReason())
	}
}
