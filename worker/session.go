package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
)

// session is one Connect stream. The receive loop in Worker.session owns
// it; phase goroutines and the watchdog are owned by its wg.
type session struct {
	w      *Worker
	stream writepathv1.WorkerService_ConnectClient
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	heard atomic.Int64 // unix ns of the last message from the coordinator

	sendMu sync.Mutex // serialises stream.Send

	mu struct {
		sync.Mutex
		phases map[string]*phase // by run id: the run's current phase here
	}
}

// session serves one stream until it breaks or ctx ends, then cancels the
// phases it started and waits for them. welcomed says the coordinator
// accepted the Hello.
func (w *Worker) session(ctx context.Context, client writepathv1.WorkerServiceClient) (welcomed bool, err error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stream, err := client.Connect(sctx)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	s := &session{w: w, stream: stream, ctx: sctx, cancel: cancel}
	s.mu.phases = map[string]*phase{}
	defer s.releaseUnstarted() // after the started phases ended below
	defer s.wg.Wait()          // runs after cancel below: phases end within a second
	defer cancel(nil)
	if err := s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Hello{Hello: w.hello()}}); err != nil {
		return false, err
	}
	first, err := stream.Recv()
	if err != nil {
		return false, fmt.Errorf("hello: %w", err)
	}
	if first.GetWelcome() == nil {
		return false, fmt.Errorf("%w: got %T", ErrNoWelcome, first.GetMsg())
	}
	w.cfg.Log.Info("connected", "coordinator", w.cfg.Coordinator)
	s.touch()
	// Give up half again the coordinator's heartbeat timeout after the
	// last word: by then the coordinator has declared this worker lost, so
	// the loss is recorded for what it was, not as a reconnect.
	silence := DefaultSilence
	if t := first.GetWelcome().GetHeartbeatTimeout(); t.CheckValid() == nil && t.AsDuration() > 0 {
		silence = t.AsDuration() * 3 / 2
	}
	s.wg.Add(1)
	go s.watchdog(silence)
	for {
		m, err := stream.Recv()
		if err != nil {
			if c := context.Cause(sctx); c != nil && sctx.Err() != nil {
				err = c
			}
			return true, err
		}
		s.touch()
		s.handle(m)
	}
}

func (s *session) touch() { s.heard.Store(time.Now().UnixNano()) }

// watchdog ends the session when the coordinator has been silent longer
// than silence (a cut link shows no error, only silence).
func (s *session) watchdog(silence time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(min(silence/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			if quiet := now.Sub(time.Unix(0, s.heard.Load())); quiet > silence {
				s.cancel(fmt.Errorf("%w for %v", ErrSilent, quiet.Round(time.Millisecond)))
				return
			}
		}
	}
}

func (s *session) send(m *writepathv1.ConnectRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if err := s.stream.Send(m); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// handle dispatches one coordinator message.
func (s *session) handle(m *writepathv1.ConnectResponse) {
	switch msg := m.GetMsg().(type) {
	case *writepathv1.ConnectResponse_Ping:
		s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Heartbeat{Heartbeat: &writepathv1.Heartbeat{
			Seq: msg.Ping.GetSeq(), PingSent: msg.Ping.GetSent(), WorkerTime: timestamppb.Now()}}})
	case *writepathv1.ConnectResponse_Validate:
		res := &writepathv1.ValidateResult{RequestId: msg.Validate.GetRequestId()}
		if _, err := build(msg.Validate.GetSpec(), s.w.cfg.env()); err != nil {
			s.w.cfg.Log.Warn("spec refused", "kind", msg.Validate.GetSpec().GetTypeUrl(), "err", err)
			res.Error = err.Error()
		} else if err := s.w.checkHost(msg.Validate.GetHost()); err != nil {
			s.w.cfg.Log.Warn("host knobs refused", "err", err)
			res.Error = err.Error()
		} else if err := s.w.cfg.checkDisk(msg.Validate.GetDisk()); err != nil {
			s.w.cfg.Log.Warn("disk profile refused", "err", err)
			res.Error = err.Error()
		}
		s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_ValidateResult{ValidateResult: res}})
	case *writepathv1.ConnectResponse_Assign:
		s.assign(msg.Assign)
	case *writepathv1.ConnectResponse_Start:
		s.start(msg.Start)
	case *writepathv1.ConnectResponse_Cancel:
		s.cancelRun(msg.Cancel.GetRunId(), msg.Cancel.GetReason(), msg.Cancel.GetStop())
	}
}

// build looks a spec's kind up in the registry, decodes the spec and, for
// a kind that names host resources, checks them against env's guard: a job
// over the worker's limits is refused here, before anything starts.
func build(spec *anypb.Any, env workload.Env) (workload.Workload, error) {
	m, ok := workload.Lookup(spec.GetTypeUrl())
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownKind, spec.GetTypeUrl())
	}
	wl, err := m.New(spec.GetValue())
	if err != nil {
		return nil, fmt.Errorf("%s spec: %w", m.Name, err)
	}
	if c, ok := wl.(workload.Checker); ok {
		if err := c.Check(env); err != nil {
			return nil, fmt.Errorf("%s spec refused by this worker: %w", m.Name, err)
		}
	}
	return wl, nil
}
