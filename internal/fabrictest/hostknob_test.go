package fabrictest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/internal/hosttest"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

func knobsOn(t *testing.T, dir string, allow ...string) *hostknob.Host {
	t.Helper()
	a, err := hostknob.ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hostknob.Open(hostknob.Config{Dir: dir, Allow: a, LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func hostSpec(s testkind.Spec, kv ...string) *writepathv1.RunSpec {
	rs := fabrictest.SynthSpec(s)
	for i := 0; i+1 < len(kv); i += 2 {
		rs.Host = append(rs.Host, &writepathv1.HostSetting{Name: kv[i], Value: kv[i+1]})
	}
	return rs
}

// TestHostKnobsAroundEveryPhase: two workers of one process share the
// knobs of a run on the loop device behind their data directory; each
// phase runs with them in force, every worker's record holds what it read
// back (nr_requests=2 clamped to 4), and the host is as before at the end.
func TestHostKnobsAroundEveryPhase(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, DataDir: fs.Dir, Knobs: knobsOn(t, fs.Dir, "scheduler,nr_requests")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := f.Coordinator().Submit(ctx, hostSpec(testkind.Spec{Ops: 200, Duration: time.Second},
		"scheduler", "mq-deadline", "nr_requests", "2"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "knobs in force during the load phase", func() error {
		if got := hosttest.QueueAttr(t, fs.Loop, "scheduler"); !strings.Contains(got, "[mq-deadline]") {
			return errors.New("scheduler " + got)
		}
		return nil
	})
	rec, err := f.Coordinator().Wait(ctx, run.GetId())
	if err != nil || rec.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("run = %v (%s), %v", rec.GetState(), rec.GetReason(), err)
	}
	saved.Check(t, "after the run")
	for _, ph := range rec.GetPhases() {
		for _, pw := range ph.GetWorkers() {
			got := map[string]string{}
			for _, h := range pw.GetHost() {
				got[h.GetKnob()+"@"+h.GetTarget()] = h.GetSet() + "->" + h.GetRead()
			}
			if got["scheduler@"+fs.Loop] != "mq-deadline->mq-deadline" || got["nr_requests@"+fs.Loop] != "2->4" {
				t.Errorf("phase %s worker %s host = %v; want scheduler and nr_requests (clamped to 4) on %s", ph.GetName(), pw.GetWorker(), got, fs.Loop)
			}
		}
	}
}

// TestHostKnobsRefusedAtSubmit: an unknown knob, a value the kernel
// refuses and a knob the operator did not allow each fail the submit with
// one line naming it, before anything changes; a worker without knobs
// refuses any.
func TestHostKnobsRefusedAtSubmit(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1, DataDir: fs.Dir, Knobs: knobsOn(t, fs.Dir, "scheduler")})
	bare := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond}
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"shceduler", "none"}, `worker-1: host knob "shceduler": unknown host knob`},
		{[]string{"scheduler", "noop"}, `worker-1: host knob scheduler=noop: bad value: ` + fs.Loop + ` does not offer "noop"`},
		{[]string{"nr_requests", "64"}, "worker-1: host knob nr_requests: not allowed by this worker's operator (worker --allow-host nr_requests, or all)"},
	} {
		_, err := f.Coordinator().Submit(ctx, hostSpec(spec, c.kv...))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Submit(host %v) = %v; want one line with %q", c.kv, err, c.want)
		}
		saved.Check(t, "after refusing "+strings.Join(c.kv, "="))
	}
	if _, err := bare.Coordinator().Submit(ctx, hostSpec(spec, "scheduler", "none")); err == nil || !strings.Contains(err.Error(), "--allow-host") {
		t.Errorf("worker without knobs: %v; want refused, naming --allow-host", err)
	}
	if runs, _ := f.Store().ListRuns(0); len(runs) != 0 {
		t.Errorf("%d runs stored after refused submits; want none", len(runs))
	}
}
