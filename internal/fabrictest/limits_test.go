package fabrictest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// connect opens a raw worker stream to f; hello, if not nil, is sent first.
// It returns how the coordinator ends the stream (nil if it stays open
// past wait, with a Welcome).
func connect(t *testing.T, f *local.Fabric, hello *writepathv1.Hello, wait time.Duration) error {
	t.Helper()
	conn, err := grpc.NewClient(f.Target(), f.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s, err := writepathv1.NewWorkerServiceClient(conn).Connect(ctx)
	if err != nil {
		return err
	}
	if hello != nil {
		if err := s.Send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Hello{Hello: hello}}); err != nil {
			return err
		}
	}
	for {
		m, err := s.Recv()
		if err != nil {
			if status.Code(err) == codes.DeadlineExceeded && ctx.Err() != nil {
				return nil // still open when we gave up: admitted
			}
			return err
		}
		_ = m
	}
}

// TestHelloDeadline: a stream that never says Hello is ended at the hello
// deadline, naming it.
func TestHelloDeadline(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Coordinator: coordinator.Config{HelloTimeout: 300 * time.Millisecond}})
	err := connect(t, f, nil, 10*time.Second)
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "hello deadline") {
		t.Errorf("a silent stream: %v; want DeadlineExceeded naming the hello deadline", err)
	}
}

// TestHelloBoundsKeepWorkersListable: 40 workers saying Hello with 8 MiB
// of labels once made `writepath workers` fail for good; each is refused
// naming the limit, and the list still comes. (One says 8 MiB, the others
// 256 KiB, far past the limit too: 40 x 8 MiB takes a minute under -race.)
func TestHelloBoundsKeepWorkersListable(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	for i := range 40 {
		size := 256 << 10
		if i == 0 {
			size = 8 << 20
		}
		big := map[string]string{"k": strings.Repeat("v", size)}
		err := connect(t, f, &writepathv1.Hello{Name: fmt.Sprintf("fat-%d", i), Labels: big}, 10*time.Second)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "the limit is") || len(err.Error()) > 400 {
			t.Fatalf("hello with 8 MiB labels: %.300v; want InvalidArgument naming the limit, in a short message", err)
		}
	}
	many := map[string]string{}
	for i := range 40 {
		many[fmt.Sprint("k", i)] = "v"
	}
	if err := connect(t, f, &writepathv1.Hello{Name: "many", Labels: many}, 10*time.Second); status.Code(err) != codes.InvalidArgument {
		t.Errorf("hello with 40 labels: %v; want InvalidArgument", err)
	}
	for _, name := range []string{"", "a\nb", strings.Repeat("n", 5<<20)} {
		err := connect(t, f, &writepathv1.Hello{Name: name}, 10*time.Second)
		if status.Code(err) != codes.InvalidArgument || len(err.Error()) > 400 {
			t.Errorf("hello named %.20q: %.300v; want a short InvalidArgument", name, err)
		}
	}
	res, err := f.Control().ListWorkers(context.Background(), &writepathv1.ListWorkersRequest{})
	if err != nil || len(res.GetWorkers()) != 1 {
		t.Fatalf("ListWorkers after the refusals = %v, %v; want the one honest worker", res.GetWorkers(), err)
	}
}

// TestMaxWorkers: past the limit a new worker is refused naming it; a
// worker already registered may reconnect.
func TestMaxWorkers(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2, Coordinator: coordinator.Config{MaxWorkers: 2}})
	err := connect(t, f, &writepathv1.Hello{Name: "third"}, 10*time.Second)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-workers") {
		t.Errorf("a third worker over a limit of 2: %v; want ResourceExhausted naming --max-workers", err)
	}
	// Admitted, it replaces the real worker-1's session (whose own
	// reconnect then replaces this one: the stream may end with EOF).
	if err := connect(t, f, &writepathv1.Hello{Name: "worker-1"}, time.Second); status.Code(err) == codes.ResourceExhausted {
		t.Errorf("worker-1 reconnecting at the limit: %v; want it admitted", err)
	}
}

// TestCampaignLimits: a plan over MaxCampaignRuns is refused, and so is a
// campaign past the limit of active campaigns.
func TestCampaignLimits(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1, Coordinator: coordinator.Config{MaxActiveCampaigns: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(i int, d time.Duration) *writepathv1.PlannedRun {
		return &writepathv1.PlannedRun{Index: uint32(i), Spec: &writepathv1.RunSpec{
			Spec:     &anypb.Any{TypeUrl: testkind.Kind, Value: testkind.Spec{Ops: 10, Duration: d}.Marshal()},
			Interval: durationpb.New(100 * time.Millisecond)}}
	}
	huge := &writepathv1.CampaignPlan{Name: "huge"}
	for i := range coordinator.MaxCampaignRuns + 1 {
		huge.Runs = append(huge.Runs, run(i, time.Second))
	}
	_, err := f.Control().SubmitCampaign(ctx, &writepathv1.SubmitCampaignRequest{Plan: huge})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "the maximum campaign size") {
		t.Errorf("a plan of %d runs: %v; want InvalidArgument naming the limit", len(huge.Runs), err)
	}
	long := &writepathv1.CampaignPlan{Name: "long", Runs: []*writepathv1.PlannedRun{run(0, 20*time.Second)}}
	first, err := f.Control().SubmitCampaign(ctx, &writepathv1.SubmitCampaignRequest{Plan: long})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Control().CancelCampaign(context.Background(), &writepathv1.CancelCampaignRequest{CampaignId: first.GetCampaign().GetId()})
	_, err = f.Control().SubmitCampaign(ctx, &writepathv1.SubmitCampaignRequest{Plan: long})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "the limit of active campaigns") {
		t.Errorf("a second campaign over a limit of 1: %v; want ResourceExhausted naming the limit", err)
	}
}

// TestErrorsEchoBounded: a 5 MB name in a request is quoted back in a
// short error (it once came back as 10 MB).
func TestErrorsEchoBounded(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	ctx := context.Background()
	long := strings.Repeat("x", 5<<20)
	calls := map[string]func() error{
		"GetRun": func() error { _, err := f.Control().GetRun(ctx, &writepathv1.GetRunRequest{RunId: long}); return err },
		"CancelRun": func() error {
			_, err := f.Control().CancelRun(ctx, &writepathv1.CancelRunRequest{RunId: long})
			return err
		},
		"GetCampaign": func() error {
			_, err := f.Control().GetCampaign(ctx, &writepathv1.GetCampaignRequest{CampaignId: long})
			return err
		},
		"ResumeCampaign": func() error {
			_, err := f.Control().ResumeCampaign(ctx, &writepathv1.ResumeCampaignRequest{CampaignId: long})
			return err
		},
		"SubmitRun selector": func() error {
			spec := fabrictest.SynthSpec(testkind.Spec{Ops: 1, Duration: 100 * time.Millisecond})
			spec.Selector = map[string]string{"k": long}
			_, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: spec})
			return err
		},
		"SubmitRun kind": func() error {
			_, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: long}}})
			return err
		},
		"SubmitRun phase": func() error {
			spec := fabrictest.SynthSpec(testkind.Spec{Ops: 1, Duration: 100 * time.Millisecond})
			spec.Phases = []string{long}
			_, err := f.Control().SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: spec})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if err == nil || len(err.Error()) > 1000 {
			n := 0
			if err != nil {
				n = len(err.Error())
			}
			t.Errorf("%s with a 5 MB name: %d-byte error (%.200v); want a short one", name, n, err)
		}
	}
}
