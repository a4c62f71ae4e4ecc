package main

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// simWorker speaks the worker protocol without running anything: it
// accepts any spec of simKind and streams the same histogram every second.
type simWorker struct {
	name   string
	hdr    []byte     // HDR's V2
	sparse []byte     // the same histogram in hist's sparse wire encoding
	mu     sync.Mutex // serialises sends
	stream writepathv1.WorkerService_ConnectClient
	wg     sync.WaitGroup
	sent   *sendLog
}

// sendLog keeps, per interval, how long after its end (this host's clock)
// each worker's send returned: the simulator's share of the publication lag.
type sendLog struct {
	mu    sync.Mutex
	after map[uint32][]time.Duration
	// offsets are the clock offsets the coordinator estimated for the
	// workers (LocalAt - At of their Start): every simulated worker reads
	// this host's clock, so each is an error of the estimate, and a worker
	// given +x ends its intervals x late.
	offsets []time.Duration
}

func (l *sendLog) offset(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offsets = append(l.offsets, d)
}

func (l *sendLog) add(seq uint32, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.after == nil {
		l.after = map[uint32][]time.Duration{}
	}
	l.after[seq] = append(l.after[seq], d)
}

// takeOffsets returns the offsets the workers were given, sorted.
func (l *sendLog) takeOffsets() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.offsets))
}

// take returns and forgets interval seq's send lags.
func (l *sendLog) take(seq uint32) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.after[seq]
	delete(l.after, seq)
	return out
}

func (w *simWorker) send(m *writepathv1.ConnectRequest) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stream.Send(m)
}

func (w *simWorker) serve(ctx context.Context, c writepathv1.WorkerServiceClient) {
	defer w.wg.Wait()
	stream, err := c.Connect(ctx)
	if err != nil {
		return
	}
	w.stream = stream
	w.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Hello{Hello: &writepathv1.Hello{
		Name: w.name, Host: "sim", Kinds: []*writepathv1.KindInfo{{Kind: simKind, Name: "sim",
			Phases: []*writepathv1.PhaseInfo{{Name: "run", Placement: writepathv1.Placement_PLACEMENT_ALL, Measured: true}}}}}}})
	var assign *writepathv1.Assign
	for {
		m, err := stream.Recv()
		if err != nil {
			return
		}
		switch msg := m.GetMsg().(type) {
		case *writepathv1.ConnectResponse_Ping:
			w.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Heartbeat{Heartbeat: &writepathv1.Heartbeat{
				Seq: msg.Ping.GetSeq(), PingSent: msg.Ping.GetSent(), WorkerTime: timestamppb.Now()}}})
		case *writepathv1.ConnectResponse_Validate:
			w.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_ValidateResult{
				ValidateResult: &writepathv1.ValidateResult{RequestId: msg.Validate.GetRequestId()}}})
		case *writepathv1.ConnectResponse_Assign:
			assign = msg.Assign
			w.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseReady{PhaseReady: &writepathv1.PhaseReady{
				RunId: assign.GetRunId(), Phase: assign.GetPhase()}}})
		case *writepathv1.ConnectResponse_Start:
			w.sent.offset(msg.Start.GetLocalAt().AsTime().Sub(msg.Start.GetAt().AsTime()))
			w.wg.Add(1)
			go func() { defer w.wg.Done(); w.stream1(ctx, assign, msg.Start.GetLocalAt().AsTime()) }()
		}
	}
}

// stream1 sends one interval per period at the boundaries, then PhaseDone.
func (w *simWorker) stream1(ctx context.Context, a *writepathv1.Assign, at time.Time) {
	n, _ := strconv.Atoi(string(a.GetSpec().GetValue()))
	d := a.GetInterval().AsDuration()
	enc := w.hdr // as a worker: the encoding its coordinator asks for
	if a.GetSparseHistograms() {
		enc = w.sparse
	}
	for k := range n {
		end := at.Add(time.Duration(k+1) * d)
		select {
		case <-time.After(time.Until(end)):
		case <-ctx.Done():
			return
		}
		w.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Interval{Interval: &writepathv1.Interval{
			RunId: a.GetRunId(), Phase: a.GetPhase(), Seq: uint32(k),
			Start: timestamppb.New(end.Add(-d)), End: timestamppb.New(end),
			Ops:      []*writepathv1.OpHistogram{{Op: "write", Hdr: enc}},
			Counters: map[string]int64{"write_bytes": 5000 * 4096}, Gauges: map[string]int64{"threads": 4}}}})
		w.sent.add(uint32(k), time.Since(end))
	}
	w.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseDone{PhaseDone: &writepathv1.PhaseDone{
		RunId: a.GetRunId(), Phase: a.GetPhase()}}})
}
