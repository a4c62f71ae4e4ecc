package fabrictest_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/fabrictest"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/workload"
)

// synthCampaign is a campaign of the synth kind: cells vary --seed, groups
// select workers by name.
func synthCampaign(cells, rounds int, duration time.Duration, groups ...string) (*campaign.Spec, []byte) {
	text := "name: synth\nworkload: fio\nmatrix:\n  --seed: ["
	for i := range cells {
		if i > 0 {
			text += ", "
		}
		text += fmt.Sprint(i + 1)
	}
	text += "]\n" + fmt.Sprintf("options: [--ops=400, --duration=%s]\nrounds: %d\nwindow: 0s-end\n", duration, rounds)
	if len(groups) > 0 {
		text += "groups:\n"
		for _, g := range groups {
			text += fmt.Sprintf("  %s: name=%s\n", g, g)
		}
	}
	spec, err := campaign.Parse("synth.yaml", []byte(text))
	if err != nil {
		panic(err) // the text above is a valid spec
	}
	return spec, []byte(text)
}

func synthPlan(t *testing.T, spec *campaign.Spec, text []byte) *writepathv1.CampaignPlan {
	t.Helper()
	meta, _ := workload.ByName("synth")
	build := func(args []string) (*anypb.Any, error) {
		b, err := meta.FromArgs(args)
		return &anypb.Any{TypeUrl: meta.Kind, Value: b}, err
	}
	plan, err := client.Plan(spec, build, client.PlanOptions{File: "synth.yaml", Text: text, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestCampaignRunsInOrderAndAggregates runs 2 cells x 2 groups x 2 rounds
// on two workers named like the groups: both groups of a batch run at the
// same time, every run completes, and the table has every cell.
func TestCampaignRunsInOrderAndAggregates(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2})
	spec, text := synthCampaign(2, 2, 500*time.Millisecond, "worker-1", "worker-2")
	c := client.New(f.Control())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.SubmitCampaign(ctx, synthPlan(t, spec, text))
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchCampaign(ctx, sub.GetId(), nil)
	if err != nil || final.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		t.Fatalf("campaign = %v (%s), %v; want FINISHED", final.GetState(), final.GetReason(), err)
	}
	runs := final.GetRuns()
	if len(runs) != 8 {
		t.Fatalf("%d runs; want 8", len(runs))
	}
	for i := 0; i < len(runs); i += 2 {
		a, b := mustRun(t, f.Store(), runs[i].GetRunId()), mustRun(t, f.Store(), runs[i+1].GetRunId())
		if a.GetStarted().AsTime().After(b.GetEnded().AsTime()) || b.GetStarted().AsTime().After(a.GetEnded().AsTime()) {
			t.Errorf("runs %d and %d (one batch, disjoint groups) did not overlap", i, i+1)
		}
		if i > 0 && a.GetStarted().AsTime().Before(mustRun(t, f.Store(), runs[i-1].GetRunId()).GetEnded().AsTime()) {
			t.Errorf("run %d started before batch %d ended", i, i/2-1)
		}
	}
	res, err := client.BuildCampaignTable(ctx, c, final)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Table.Rows {
		for gi, a := range r.Aggs {
			if a.Rounds != 2 || a.Throughput <= 0 || a.P99 <= 0 {
				t.Errorf("cell %s group %s: %+v; want 2 rounds with data", r.Label, res.Table.Groups[gi], a)
			}
		}
	}
}

// TestCampaignOverlappingGroupsTakeTurns: two groups selecting the same
// worker cannot run together; the second waits for the first.
func TestCampaignOverlappingGroupsTakeTurns(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	text := []byte("name: o\nworkload: fio\nmatrix:\n  --seed: [1]\noptions: [--ops=100, --duration=300ms]\nrounds: 1\ngroups:\n  a: name=worker-1\n  b: name=worker-1\n")
	spec, err := campaign.Parse("o.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(f.Control())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.SubmitCampaign(ctx, synthPlan(t, spec, text))
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchCampaign(ctx, sub.GetId(), nil)
	if err != nil || final.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		t.Fatalf("campaign = %v (%s), %v; want FINISHED", final.GetState(), final.GetReason(), err)
	}
	a, b := mustRun(t, f.Store(), final.GetRuns()[0].GetRunId()), mustRun(t, f.Store(), final.GetRuns()[1].GetRunId())
	if b.GetStarted().AsTime().Before(a.GetEnded().AsTime()) {
		t.Errorf("overlapping groups ran together: %v < %v", b.GetStarted().AsTime(), a.GetEnded().AsTime())
	}
}

// TestCampaignWindowMedianOnStoredIntervals checks aggregation against the
// stored intervals themselves: only intervals inside the window count, the
// p99 is the merged histogram's, and the cell's value is the median of
// its rounds.
func TestCampaignWindowMedianOnStoredIntervals(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	text := []byte("name: w\nworkload: fio\nmatrix:\n  --seed: [7]\noptions: [--ops=2000, --duration=1s]\nrounds: 3\nwindow: 200ms-800ms\n")
	spec, err := campaign.Parse("w.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(f.Control())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.SubmitCampaign(ctx, synthPlan(t, spec, text))
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchCampaign(ctx, sub.GetId(), nil)
	if err != nil || final.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		t.Fatalf("campaign = %v (%s), %v", final.GetState(), final.GetReason(), err)
	}
	var tps []float64
	for _, cr := range final.GetRuns() {
		r, err := results.Read(ctx, c, cr.GetRunId(), results.MergedOnly)
		if err != nil {
			t.Fatal(err)
		}
		ivs, err := client.CampaignIntervals(r)
		if err != nil {
			t.Fatal(err)
		}
		var ops int64
		var span time.Duration
		n := 0
		for _, iv := range ivs {
			if iv.Start >= 200*time.Millisecond && iv.End <= 800*time.Millisecond {
				ops, span, n = ops+iv.Ops, span+iv.End-iv.Start, n+1
			}
		}
		st, err := spec.Window.Stat(ivs)
		if err != nil {
			t.Fatal(err)
		}
		if n != 6 || st.Intervals != n || st.Ops != ops {
			t.Errorf("run %s: Stat counted %d intervals, %d ops; want 6 (by hand %d), %d", cr.GetRunId(), st.Intervals, st.Ops, n, ops)
		}
		tps = append(tps, float64(ops)/span.Seconds())
	}
	res, err := client.BuildCampaignTable(ctx, c, final)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Table.Rows[0].Aggs[0]
	if want := median3(tps); got.Throughput != want || got.Rounds != 3 {
		t.Errorf("median throughput = %v over %d rounds; want %v (rounds %v)", got.Throughput, got.Rounds, want, tps)
	}
}

func median3(xs []float64) float64 {
	a, b, c := xs[0], xs[1], xs[2]
	return max(min(a, b), min(max(a, b), c))
}

func mustRun(t *testing.T, st *store.Store, id string) *writepathv1.Run {
	t.Helper()
	r, err := st.GetRun(id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCampaignResumesAfterCoordinatorKilled kills a coordinator process
// with SIGKILL in the middle of a campaign, starts a new one on the same
// file and resumes: every run that completed before the kill is kept (same
// run id, not redone), the run cut short is redone, and in the end every
// planned run has exactly one completed run.
func TestCampaignResumesAfterCoordinatorKilled(t *testing.T) {
	addr, db := freeAddr(t), t.TempDir()+"/writepath.db"
	child := startChild(t, addr, db)
	defer child.Process.Kill()
	workers(t, addr, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctl := control(t, addr)
	eventually(t, "workers connect", func() error { return connected(ctx, ctl, 2) })
	spec, text := synthCampaign(3, 1, 800*time.Millisecond, "w1", "w2")
	c := client.New(ctl)
	sub, err := c.SubmitCampaign(ctx, synthPlan(t, spec, text))
	if err != nil {
		t.Fatal(err)
	}
	var before *writepathv1.Campaign
	eventually(t, "first batch done, second in flight", func() error {
		cp, err := c.GetCampaign(ctx, sub.GetId())
		if err != nil {
			return err
		}
		r := cp.GetRuns()
		if !r[0].GetDone() || !r[1].GetDone() || r[2].GetRunId() == "" || r[2].GetDone() {
			return errors.New("not yet")
		}
		before = cp
		return nil
	})
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()

	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	co, err := coordinator.New(fabrictest.FastCoordinator(), st)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := listenRetry(addr)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	co.Register(s)
	go s.Serve(lis)
	defer func() { co.Close(); s.Stop() }()

	var stopped *writepathv1.Campaign
	eventually(t, "read the campaign from the new coordinator", func() error {
		stopped, err = c.GetCampaign(ctx, sub.GetId())
		return err
	})
	if stopped.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_INTERRUPTED {
		t.Fatalf("campaign after restart: %v; want INTERRUPTED", stopped.GetState())
	}
	eventually(t, "workers reconnect", func() error { return connected(ctx, ctl, 2) })
	if _, err := c.ResumeCampaign(ctx, sub.GetId()); err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchCampaign(ctx, sub.GetId(), nil)
	if err != nil || final.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		t.Fatalf("resumed campaign = %v (%s), %v; want FINISHED", final.GetState(), final.GetReason(), err)
	}
	for i := range 2 {
		if got, want := final.GetRuns()[i].GetRunId(), before.GetRuns()[i].GetRunId(); got != want {
			t.Errorf("run %d redone: %s, was %s", i, got, want)
		}
	}
	seen := map[string]bool{}
	for i, cr := range final.GetRuns() {
		r := mustRun(t, st, cr.GetRunId())
		if !cr.GetDone() || r.GetState() != writepathv1.RunState_RUN_STATE_FINISHED || seen[cr.GetRunId()] {
			t.Errorf("planned run %d: %+v (run %v); want one finished run of its own", i, cr, r.GetState())
		}
		seen[cr.GetRunId()] = true
	}
	cut := final.GetRuns()[2]
	if id := before.GetRuns()[2].GetRunId(); cut.GetRunId() == id || len(cut.GetPreviousRunIds()) != 1 || cut.GetPreviousRunIds()[0] != id {
		t.Errorf("run cut by the kill: %+v; want redone with %s in previous_run_ids", cut, id)
	}
	if r := mustRun(t, st, before.GetRuns()[2].GetRunId()); r.GetState() != writepathv1.RunState_RUN_STATE_INTERRUPTED {
		t.Errorf("cut run stored %v; want INTERRUPTED", r.GetState())
	}
}

// TestCampaignCancelStopsItsRun: cancelling a campaign stops the run in
// flight; the campaign ends cancelled and can be resumed later.
func TestCampaignCancelStopsItsRun(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	spec, text := synthCampaign(2, 1, time.Minute)
	c := client.New(f.Control())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.SubmitCampaign(ctx, synthPlan(t, spec, text))
	if err != nil {
		t.Fatal(err)
	}
	var runID string
	eventually(t, "first run in flight", func() error {
		cp, err := c.GetCampaign(ctx, sub.GetId())
		if runID = cp.GetRuns()[0].GetRunId(); err == nil && runID == "" {
			err = errors.New("not yet")
		}
		return err
	})
	got, err := c.CancelCampaign(ctx, sub.GetId(), "test")
	if err != nil || got.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_CANCELLED {
		t.Fatalf("CancelCampaign = %v (%s), %v; want CANCELLED", got.GetState(), got.GetReason(), err)
	}
	r, err := f.Coordinator().Wait(ctx, runID)
	if err != nil || r.GetState() != writepathv1.RunState_RUN_STATE_CANCELLED {
		t.Errorf("run %s = %v, %v; want CANCELLED", runID, r.GetState(), err)
	}
}
