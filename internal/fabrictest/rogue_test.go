package fabrictest_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// rogue is a hand-rolled worker over real gRPC: it speaks the protocol
// until its phase starts, then sends the intervals bad returns.
type rogue struct {
	name string
	bad  func(run, phase string, at time.Time) []*writepathv1.Interval
	// forge answers, with every Validate, the neighbouring request ids too:
	// accepting the spec on other workers' behalf.
	forge bool
	// refuse, when set, answers Validate with this refusal after a pause.
	refuse string
}

func (r rogue) run(ctx context.Context, t *testing.T, f *local.Fabric) {
	conn, err := grpc.NewClient(f.Target(), f.DialOptions()...)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close()
	stream, err := writepathv1.NewWorkerServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Error(err)
		return
	}
	send := func(m *writepathv1.ConnectRequest) { stream.Send(m) }
	send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Hello{Hello: &writepathv1.Hello{
		Name: r.name, Kinds: []*writepathv1.KindInfo{synthKind()}}}})
	for {
		m, err := stream.Recv()
		if err != nil {
			return // evicted, or the test ended
		}
		r.answer(m, send)
	}
}

// answer plays an honest worker except for the intervals.
func (r rogue) answer(m *writepathv1.ConnectResponse, send func(*writepathv1.ConnectRequest)) {
	switch msg := m.GetMsg().(type) {
	case *writepathv1.ConnectResponse_Ping:
		send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Heartbeat{Heartbeat: &writepathv1.Heartbeat{
			Seq: msg.Ping.GetSeq(), PingSent: msg.Ping.GetSent(), WorkerTime: timestamppb.Now()}}})
	case *writepathv1.ConnectResponse_Validate:
		id := msg.Validate.GetRequestId()
		if r.refuse != "" {
			time.Sleep(300 * time.Millisecond) // the forger answers first
			send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_ValidateResult{
				ValidateResult: &writepathv1.ValidateResult{RequestId: id, Error: r.refuse}}})
			return
		}
		from, to := id, id
		if r.forge {
			from, to = max(id, 4)-3, id+3
		}
		for i := from; i <= to; i++ {
			send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_ValidateResult{
				ValidateResult: &writepathv1.ValidateResult{RequestId: i}}})
		}
	case *writepathv1.ConnectResponse_Assign:
		send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseReady{
			PhaseReady: &writepathv1.PhaseReady{RunId: msg.Assign.GetRunId(), Phase: msg.Assign.GetPhase()}}})
	case *writepathv1.ConnectResponse_Start:
		st := msg.Start
		send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseStarted{PhaseStarted: &writepathv1.PhaseStarted{
			RunId: st.GetRunId(), Phase: st.GetPhase(), Started: timestamppb.Now()}}})
		if st.GetPhase() != "load" {
			send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseDone{
				PhaseDone: &writepathv1.PhaseDone{RunId: st.GetRunId(), Phase: st.GetPhase()}}})
			return
		}
		for _, iv := range r.bad(st.GetRunId(), st.GetPhase(), st.GetAt().AsTime()) {
			send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Interval{Interval: iv}})
		}
	}
}

func synthKind() *writepathv1.KindInfo {
	return &writepathv1.KindInfo{Kind: testkind.Kind, Name: "synth", Phases: []*writepathv1.PhaseInfo{
		{Name: "setup", Placement: writepathv1.Placement_PLACEMENT_ONE},
		{Name: "load", Placement: writepathv1.Placement_PLACEMENT_ALL, Measured: true}}}
}

// interval is a well-formed interval seq of 100 ms with one "op" histogram.
func interval(run, phase string, at time.Time, seq uint32, hdr []byte) *writepathv1.Interval {
	start := at.Add(time.Duration(seq) * 100 * time.Millisecond)
	return &writepathv1.Interval{RunId: run, Phase: phase, Seq: seq, Start: timestamppb.New(start),
		End: timestamppb.New(start.Add(100 * time.Millisecond)),
		Ops: []*writepathv1.OpHistogram{{Op: "op", Hdr: hdr}}}
}

func goodHdr(t *testing.T) []byte {
	h := hist.New()
	h.Record(1000)
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMisbehavingWorkerEvicted runs synth on two honest workers and a rogue
// one that sends a malformed, an oversize or out-of-order intervals: the
// rogue is disconnected and named lost with the reason, the run ends
// partial, and the honest workers' intervals are all merged.
func TestMisbehavingWorkerEvicted(t *testing.T) {
	tests := []struct {
		name, reason string
		merged       int64 // operations merged: the honest workers' 600, and what the rogue sent before
		bad          func(t *testing.T) func(run, phase string, at time.Time) []*writepathv1.Interval
	}{
		{"malformed", "bad interval", 600, func(t *testing.T) func(string, string, time.Time) []*writepathv1.Interval {
			return func(run, phase string, at time.Time) []*writepathv1.Interval {
				return []*writepathv1.Interval{interval(run, phase, at, 0, []byte("\x1c\x84\x93\x14not a histogram"))}
			}
		}},
		{"oversize", "limit", 600, func(t *testing.T) func(string, string, time.Time) []*writepathv1.Interval {
			return func(run, phase string, at time.Time) []*writepathv1.Interval {
				return []*writepathv1.Interval{interval(run, phase, at, 0, bytes.Repeat([]byte{1}, hist.MaxEncodedSize+1))}
			}
		}},
		{"out-of-order", "out of order", 601, func(t *testing.T) func(string, string, time.Time) []*writepathv1.Interval {
			hdr := goodHdr(t)
			return func(run, phase string, at time.Time) []*writepathv1.Interval {
				return []*writepathv1.Interval{interval(run, phase, at, 2, hdr), interval(run, phase, at, 1, hdr)}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fabrictest.Start(t, fabrictest.Options{Workers: 2})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan struct{})
			go func() { defer close(done); rogue{name: "rogue", bad: tt.bad(t)}.run(ctx, t, f) }()
			defer func() { cancel(); <-done }()
			waitWorkers(t, f.Control(), 3)
			rec, err := client.New(f.Control()).Run(ctx, fabrictest.SynthSpec(testkind.Spec{Ops: 300, Duration: time.Second}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rec.GetState() != writepathv1.RunState_RUN_STATE_PARTIAL || len(rec.GetLost()) != 1 || rec.GetLost()[0] != "rogue" {
				t.Fatalf("run = %v lost %v (%s); want PARTIAL losing [rogue]", rec.GetState(), rec.GetLost(), rec.GetReason())
			}
			for _, w := range rec.GetWorkers() {
				if w.GetName() == "rogue" && !strings.Contains(w.GetLostReason(), tt.reason) {
					t.Errorf("rogue lost reason = %q; want it to mention %q", w.GetLostReason(), tt.reason)
				}
			}
			checkHonestMerged(t, f.Control(), rec.GetId(), tt.merged)
		})
	}
}

// checkHonestMerged checks that the merged intervals hold want operations:
// every one of the honest workers (300 each) and nothing refused.
func checkHonestMerged(t *testing.T, ctl writepathv1.ControlServiceClient, id string, want int64) {
	t.Helper()
	res, err := fabrictest.ReadStored(context.Background(), ctl, id, false)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, mi := range res.GetIntervals() {
		for _, st := range mi.GetStats() {
			n += st.GetCount()
		}
	}
	if n != want {
		t.Errorf("merged operations = %d; want %d (the honest workers' own)", n, want)
	}
}

func waitWorkers(t *testing.T, ctl writepathv1.ControlServiceClient, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := ctl.ListWorkers(context.Background(), &writepathv1.ListWorkersRequest{})
		if err == nil && len(res.GetWorkers()) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("fewer than %d workers connected", n)
}

// TestValidationOnlyFromTheWorkerAsked: a worker that answers the
// validations sent to another (accepting a spec that one refuses) is not
// heard; the submit fails with the real worker's refusal.
func TestValidationOnlyFromTheWorkerAsked(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for _, r := range []rogue{{name: "judge", refuse: "judge refuses this spec"}, {name: "forger", forge: true}} {
		wg.Add(1)
		go func() { defer wg.Done(); r.run(ctx, t, f) }()
	}
	waitWorkers(t, f.Control(), 2)
	_, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: fabrictest.SynthSpec(testkind.Spec{Ops: 10, Duration: 100 * time.Millisecond})})
	if err == nil || !strings.Contains(err.Error(), "judge refuses this spec") {
		t.Fatalf("submit on a refusing worker beside a forger = %v; want the judge's refusal", err)
	}
}
