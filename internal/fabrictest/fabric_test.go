package fabrictest_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// submitAndWait submits spec and waits (bounded) for the run to end.
func submitAndWait(t *testing.T, f *local.Fabric, spec *writepathv1.RunSpec) *fabrictest.Stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: spec})
	if err != nil {
		t.Fatalf("SubmitRun: %v", err)
	}
	return waitRun(ctx, t, f, sub.GetRun().GetId())
}

func waitRun(ctx context.Context, t *testing.T, f *local.Fabric, id string) *fabrictest.Stored {
	t.Helper()
	if _, err := f.Coordinator().Wait(ctx, id); err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	got, err := fabrictest.ReadStored(ctx, f.Control(), id, true)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return got
}

// mergeOp merges op's histograms over a run's merged intervals.
func mergeOp(t *testing.T, ivs []*writepathv1.MergedInterval, op string) (*hist.Histogram, int64) {
	t.Helper()
	all := hist.New()
	var bytes int64
	for _, mi := range ivs {
		bytes += mi.GetCounters()["write_bytes"]
		for _, o := range mi.GetOps() {
			if o.GetOp() != op {
				continue
			}
			h, err := hist.Decode(o.GetHdr())
			if err != nil {
				t.Fatalf("interval %d: %v", mi.GetSeq(), err)
			}
			if err := all.Merge(h); err != nil {
				t.Fatal(err)
			}
		}
	}
	return all, bytes
}

// union records every shard's samples into one histogram.
func union(seed int64, shards []int, n int) *hist.Histogram {
	h := hist.New()
	for _, s := range shards {
		for _, v := range testkind.Samples(seed, s, n) {
			h.Record(v)
		}
	}
	return h
}

func sameDistribution(t *testing.T, what string, got, want *hist.Histogram) {
	t.Helper()
	ps := []float64{50, 99, 99.9, 100}
	g, w := got.Percentiles(ps), want.Percentiles(ps)
	for i := range ps {
		if g[i] != w[i] {
			t.Errorf("%s: p%v = %d; want %d (union of samples)", what, ps[i], g[i], w[i])
		}
	}
	if got.Count() != want.Count() || got.Max() != want.Max() || got.Min() != want.Min() {
		t.Errorf("%s: count/min/max = %d/%d/%d; want %d/%d/%d", what,
			got.Count(), got.Min(), got.Max(), want.Count(), want.Min(), want.Max())
	}
}

// TestThreeWorkerRunMergesExactly runs the synth kind on three workers over
// loopback gRPC: the merged histograms over all intervals must equal the
// histogram of the union of the shards' samples, and counters must sum.
func TestThreeWorkerRunMergesExactly(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 3})
	const ops = 3000
	spec := testkind.Spec{Ops: ops, Duration: 600 * time.Millisecond, Seed: 7, BlockSize: 4096}
	got := submitAndWait(t, f, fabrictest.SynthSpec(spec))
	run := got.GetRun()
	if run.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("state = %v (%s); want FINISHED", run.GetState(), run.GetReason())
	}
	merged, bytes := mergeOp(t, got.GetIntervals(), "write")
	sameDistribution(t, "merged", merged, union(7, []int{0, 1, 2}, ops))
	if want := int64(3 * ops * 4096); bytes != want {
		t.Errorf("sum of write_bytes = %d; want %d", bytes, want)
	}
	if len(got.GetIntervals()) < 5 {
		t.Errorf("%d merged intervals; want >= 5 of 100 ms in a 600 ms phase", len(got.GetIntervals()))
	}
	// Every worker reports every interval from 0 up to its last one
	// (workers end apart when the machine is loaded); none is ever missing.
	last := map[string]int{}
	for _, mi := range got.GetIntervals() {
		if len(mi.GetMissing()) != 0 {
			t.Errorf("interval %d: missing %v; want none", mi.GetSeq(), mi.GetMissing())
		}
		for _, w := range mi.GetReporting() {
			if last[w] != int(mi.GetSeq()) {
				t.Errorf("interval %d: %s reports after a gap (previous %d)", mi.GetSeq(), w, last[w]-1)
			}
			last[w] = int(mi.GetSeq()) + 1
		}
	}
	checkWorkerSnapshots(t, got, spec)
	checkPhases(t, run)
}

// checkWorkerSnapshots: each worker's own stored snapshots hold exactly its
// shard's samples, sent in the sparse wire encoding the coordinator asked
// for.
func checkWorkerSnapshots(t *testing.T, got *fabrictest.Stored, spec testkind.Spec) {
	t.Helper()
	per := map[string]*hist.Histogram{}
	for _, wi := range got.GetWorkerIntervals() {
		if per[wi.GetWorker()] == nil {
			per[wi.GetWorker()] = hist.New()
		}
		for _, o := range wi.GetInterval().GetOps() {
			if !hist.IsSparseEncoding(o.GetHdr()) {
				t.Errorf("worker %s interval %d op %s: not in the sparse wire encoding", wi.GetWorker(), wi.GetInterval().GetSeq(), o.GetOp())
			}
			h, err := hist.Decode(o.GetHdr())
			if err != nil {
				t.Fatal(err)
			}
			per[wi.GetWorker()].Merge(h)
		}
	}
	for _, pw := range got.GetRun().GetPhases()[1].GetWorkers() {
		want := union(spec.Seed, []int{int(pw.GetShardIndex())}, spec.Ops)
		sameDistribution(t, "worker "+pw.GetWorker(), per[pw.GetWorker()], want)
	}
	checkTotals(t, got, 3)
}

// checkTotals: the coordinator stored, per worker, a phase total that is
// exactly its stored snapshots summed: histograms bucket for bucket,
// counters, seconds (added in the same order), interval count.
func checkTotals(t *testing.T, got *fabrictest.Stored, workers int) {
	t.Helper()
	type sum struct {
		ops      map[string]*hist.Histogram
		counters map[string]int64
		seconds  float64
		n        uint32
	}
	sums := map[[2]string]*sum{}
	for _, wi := range got.GetWorkerIntervals() {
		iv := wi.GetInterval()
		k := [2]string{iv.GetPhase(), wi.GetWorker()}
		if sums[k] == nil {
			sums[k] = &sum{ops: map[string]*hist.Histogram{}, counters: map[string]int64{}}
		}
		s := sums[k]
		for _, o := range iv.GetOps() {
			h, err := hist.Decode(o.GetHdr())
			if err != nil {
				t.Fatal(err)
			}
			if s.ops[o.GetOp()] == nil {
				s.ops[o.GetOp()] = hist.New()
			}
			s.ops[o.GetOp()].Merge(h)
		}
		for c, v := range iv.GetCounters() {
			s.counters[c] += v
		}
		s.seconds += iv.GetEnd().AsTime().Sub(iv.GetStart().AsTime()).Seconds()
		s.n++
	}
	if len(got.WorkerTotals) != workers || len(sums) != workers {
		t.Fatalf("%d worker totals, %d workers with snapshots; want %d", len(got.WorkerTotals), len(sums), workers)
	}
	for _, tot := range got.WorkerTotals {
		s := sums[[2]string{tot.GetPhase(), tot.GetWorker()}]
		if s == nil || tot.GetIntervals() != s.n || tot.GetSeconds() != s.seconds || !maps.Equal(tot.GetCounters(), s.counters) || len(tot.GetOps()) != len(s.ops) {
			t.Errorf("total of %s/%s = %d intervals, %v s, %v; want the snapshots' %+v", tot.GetPhase(), tot.GetWorker(), tot.GetIntervals(), tot.GetSeconds(), tot.GetCounters(), s)
			continue
		}
		for _, o := range tot.GetOps() {
			h, err := hist.Decode(o.GetHdr())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.Buckets(), s.ops[o.GetOp()].Buckets()) {
				t.Errorf("total of %s/%s op %s differs from its snapshots' merge", tot.GetPhase(), tot.GetWorker(), o.GetOp())
			}
		}
	}
}

func checkPhases(t *testing.T, run *writepathv1.Run) {
	t.Helper()
	ph := run.GetPhases()
	if len(ph) != 2 || ph[0].GetName() != "setup" || len(ph[0].GetWorkers()) != 1 || len(ph[1].GetWorkers()) != 3 {
		t.Fatalf("phases = %v; want setup on one worker, load on three", ph)
	}
	for _, p := range ph {
		if p.GetState() != writepathv1.PhaseState_PHASE_STATE_DONE {
			t.Errorf("phase %s state = %v; want DONE", p.GetName(), p.GetState())
		}
		for _, pw := range p.GetWorkers() {
			// Loopback clocks agree; a skew past 50 ms means the barrier is broken.
			if s := pw.GetStartSkew().AsDuration(); pw.GetStartSkew() == nil || s > 50*time.Millisecond || s < -50*time.Millisecond {
				t.Errorf("phase %s worker %s start skew = %v; want recorded, |skew| < 50ms", p.GetName(), pw.GetWorker(), pw.GetStartSkew())
			}
		}
	}
	for _, w := range run.GetWorkers() {
		if w.GetRtt() == nil {
			t.Errorf("worker %s: no clock estimate recorded", w.GetName())
		}
	}
	if string(ph[1].GetWorkers()[0].GetSummary()) == "" {
		t.Errorf("load phase: no summary from the kind")
	}
}

// TestPartialWhenWorkerLost stops one of three workers mid-run: the run
// must end PARTIAL naming it, keep the survivors' complete data, and no
// interval may wait on the lost worker past the bounded wait.
func TestPartialWhenWorkerLost(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 3})
	spec := testkind.Spec{Ops: 2000, Duration: 1500 * time.Millisecond, Seed: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: fabrictest.SynthSpec(spec)})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.GetRun().GetId()
	waitIntervals(ctx, t, f, id, 3)
	// Under load worker-2 may not have reported yet when three merged
	// intervals are stored (they close on a bounded wait without it): it
	// is stopped once a snapshot of its with ops is stored.
	waitWorkerOps(ctx, t, f, id, "worker-2")
	f.StopWorker("worker-2")
	got := waitRun(ctx, t, f, id)
	run := got.GetRun()
	if run.GetState() != writepathv1.RunState_RUN_STATE_PARTIAL || len(run.GetLost()) != 1 || run.GetLost()[0] != "worker-2" {
		t.Fatalf("state = %v lost = %v (%s); want PARTIAL, lost [worker-2]", run.GetState(), run.GetLost(), run.GetReason())
	}
	if !strings.Contains(run.GetReason(), "worker-2") {
		t.Errorf("reason %q does not name worker-2", run.GetReason())
	}
	perWorker := map[string]int64{}
	for _, wi := range got.GetWorkerIntervals() {
		for _, o := range wi.GetInterval().GetOps() {
			h, _ := hist.Decode(o.GetHdr())
			perWorker[wi.GetWorker()] += h.Count()
		}
	}
	for _, w := range []string{"worker-1", "worker-3"} {
		if perWorker[w] != int64(spec.Ops) {
			t.Errorf("survivor %s stored %d ops; want all %d", w, perWorker[w], spec.Ops)
		}
	}
	if perWorker["worker-2"] == 0 || perWorker["worker-2"] >= int64(spec.Ops) {
		t.Errorf("lost worker-2 stored %d ops; want what it reported before it was lost", perWorker["worker-2"])
	}
	merged, _ := mergeOp(t, got.GetIntervals(), "write")
	if sum := perWorker["worker-1"] + perWorker["worker-2"] + perWorker["worker-3"]; merged.Count() != sum {
		t.Errorf("merged count = %d; want the %d the workers' stored snapshots hold", merged.Count(), sum)
	}
	checkTotals(t, got, 3)
}

// waitWorkerOps waits until the run has stored a snapshot of worker
// holding at least one op.
func waitWorkerOps(ctx context.Context, t *testing.T, f *local.Fabric, id, worker string) {
	t.Helper()
	for {
		var ops int64
		err := f.Store().WorkerIntervals(id, -1, func(_ int, sn store.WorkerSnapshot) error {
			if sn.Worker != worker {
				return nil
			}
			for _, o := range sn.Interval.GetOps() {
				h, err := hist.Decode(o.GetHdr())
				if err != nil {
					return err
				}
				ops += h.Count()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if ops > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s: no snapshot of %s with ops stored: %v", id, worker, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitIntervals waits until the run has stored n merged intervals.
func waitIntervals(ctx context.Context, t *testing.T, f *local.Fabric, id string, n int) {
	t.Helper()
	for {
		have := 0
		if err := f.Store().Intervals(id, func(int, *writepathv1.MergedInterval) error { have++; return nil }); err != nil {
			t.Fatal(err)
		}
		if have >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s: %d intervals, want %d: %v", id, have, n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestCancelStopsEveryWorker cancels a long run: it must end CANCELLED
// within two seconds and free its workers for the next run.
func TestCancelStopsEveryWorker(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Bufconn: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	spec := testkind.Spec{Ops: 1_000_000, Duration: time.Minute, Seed: 1}
	sub, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: fabrictest.SynthSpec(spec)})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.GetRun().GetId()
	waitIntervals(ctx, t, f, id, 2)
	start := time.Now()
	if _, err := f.Control().CancelRun(ctx, &writepathv1.CancelRunRequest{RunId: id, Reason: "test says stop"}); err != nil {
		t.Fatal(err)
	}
	got := waitRun(ctx, t, f, id)
	took := time.Since(start)
	t.Logf("cancel to end: %v", took)
	if took > 4*time.Second {
		t.Errorf("cancel took %v; want ~0.1 s unloaded, 4 s at most under -race on a shared machine", took)
	}
	run := got.GetRun()
	if run.GetState() != writepathv1.RunState_RUN_STATE_CANCELLED || !strings.Contains(run.GetReason(), "test says stop") {
		t.Fatalf("state = %v (%s); want CANCELLED with the reason", run.GetState(), run.GetReason())
	}
	for _, pw := range run.GetPhases()[1].GetWorkers() {
		if !pw.GetDone() {
			t.Errorf("worker %s did not confirm the cancel", pw.GetWorker())
		}
	}
	again := submitAndWait(t, f, fabrictest.SynthSpec(testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond}))
	if again.GetRun().GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Errorf("run after cancel: %v (%s); want FINISHED", again.GetRun().GetState(), again.GetRun().GetReason())
	}
}

// TestWorkerFailureFailsRun: a kind error on one worker fails the run with
// its message.
func TestWorkerFailureFailsRun(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Bufconn: true})
	got := submitAndWait(t, f, fabrictest.SynthSpec(testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond, Fail: "disk on fire"}))
	run := got.GetRun()
	if run.GetState() != writepathv1.RunState_RUN_STATE_FAILED || !strings.Contains(run.GetReason(), "disk on fire") {
		t.Fatalf("state = %v (%s); want FAILED naming the error", run.GetState(), run.GetReason())
	}
}

// TestSubmitRefusesBadInput: every problem knowable before the start fails
// the submit with a clear message, and no run is created.
func TestSubmitRefusesBadInput(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Bufconn: true})
	good := func() *writepathv1.RunSpec {
		return fabrictest.SynthSpec(testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond})
	}
	unknown := good()
	unknown.Spec.TypeUrl = "type.googleapis.com/writepath.nope.v1.Spec"
	badPhase := good()
	badPhase.Phases = []string{"warmup"}
	noMatch := good()
	noMatch.Selector = map[string]string{"disk": "nvme"}
	tooMany := good()
	tooMany.Workers = 5
	invalid := fabrictest.SynthSpec(testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond})
	invalid.Spec.Value = testkind.Spec{Ops: -1}.Marshal()
	reject := fabrictest.SynthSpec(testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond, Reject: true})
	tests := []struct {
		name string
		spec *writepathv1.RunSpec
		code codes.Code
		want []string
	}{
		{"unknown kind", unknown, codes.InvalidArgument, []string{"unknown workload kind", "writepath.nope.v1.Spec", "synth"}},
		{"unknown phase", badPhase, codes.InvalidArgument, []string{`no phase "warmup"`, "setup, load"}},
		{"no matching workers", noMatch, codes.FailedPrecondition, []string{"no matching workers", "disk=nvme"}},
		{"too few workers", tooMany, codes.FailedPrecondition, []string{"want 5, have 2"}},
		{"invalid options", invalid, codes.InvalidArgument, []string{"worker-1: synth spec: synth: ops -1", "duration 0s"}},
		{"worker rejects", reject, codes.InvalidArgument, []string{"spec rejected by worker", "worker-1", "worker-2", "reject is set"}},
		{"no spec", &writepathv1.RunSpec{}, codes.InvalidArgument, []string{"no workload spec"}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		_, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: tt.spec})
		st, _ := status.FromError(err)
		if st.Code() != tt.code {
			t.Errorf("%s: SubmitRun() code = %v (%v); want %v", tt.name, st.Code(), err, tt.code)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(st.Message(), w) {
				t.Errorf("%s: SubmitRun() message %q lacks %q", tt.name, st.Message(), w)
			}
		}
	}
	runs, _ := f.Control().ListRuns(ctx, &writepathv1.ListRunsRequest{})
	if len(runs.GetRuns()) != 0 {
		t.Errorf("refused submits created %d runs; want 0", len(runs.GetRuns()))
	}
	// The refusals released the workers.
	if got := submitAndWait(t, f, good()); got.GetRun().GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Errorf("good run after refusals: %v (%s)", got.GetRun().GetState(), got.GetRun().GetReason())
	}
}
