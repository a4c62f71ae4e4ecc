package coordinator

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/echo"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// workerService serves WorkerService.Connect.
type workerService struct {
	writepathv1.UnimplementedWorkerServiceServer
	c *Coordinator
}

var _ writepathv1.WorkerServiceServer = (*workerService)(nil)

// Connect registers a worker and serves its stream. This handler goroutine
// owns the stream's sends; a receiver goroutine (owned by the coordinator)
// handles what arrives, and a pinger ends the session when the worker has
// been silent past the heartbeat timeout. Returning ends the stream, which
// unblocks the receiver.
func (ws *workerService) Connect(stream writepathv1.WorkerService_ConnectServer) error {
	c := ws.c
	h, err := c.hello(stream)
	if err != nil {
		return err
	}
	s, err := c.register(h)
	if err != nil {
		return err
	}
	defer c.unregister(s)
	c.goOwned(func() { c.receive(s, stream) })
	c.goOwned(func() { c.pinger(s) })
	for {
		select {
		case m := <-s.out:
			s.sending(m, time.Now())
			if err := stream.Send(m); err != nil {
				s.end(fmt.Sprintf("send: %v", err))
				return nil
			}
		case <-s.done:
			return nil
		case <-stream.Context().Done():
			s.end("stream closed")
			return nil
		case <-c.ctx.Done():
			s.end("coordinator closing")
			return status.Error(codes.Unavailable, "coordinator closing")
		}
	}
}

func (c *Coordinator) receive(s *session, stream writepathv1.WorkerService_ConnectServer) {
	var dec hist.Decoder // this goroutine's: decoders are not shared
	for {
		m, err := stream.Recv()
		if err != nil {
			s.end(fmt.Sprintf("stream: %v", err))
			return
		}
		now := time.Now()
		s.seen(now)
		c.handle(&dec, s, m, now)
	}
}

// pinger pings the worker every heartbeat interval and ends the session
// once it has been silent for the heartbeat timeout. While the worker
// streams intervals it is pinged less often (pingPacer).
func (c *Coordinator) pinger(s *session) {
	t := time.NewTicker(c.cfg.HeartbeatInterval)
	defer t.Stop()
	pace := newPingPacer(c.cfg.HeartbeatInterval, c.cfg.HeartbeatTimeout)
	s.ping()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			if silent := s.silentFor(now); silent > c.cfg.HeartbeatTimeout {
				s.end(fmt.Sprintf("heartbeat timeout: silent for %v", silent.Round(time.Millisecond)))
				return
			}
			if pace.due(s.streamed.Swap(false)) {
				s.ping()
			}
		}
	}
}

// pingPacer decides which heartbeat ticks ping a worker. A worker that
// sent an interval since the last tick has shown it is alive, so it is
// pinged only every few ticks, at most half the heartbeat timeout apart:
// the worker gives up after 1.5 timeouts of silence (worker/session.go),
// so it still hears from the coordinator three times within them, and the
// clock samples go on, fewer. At 1,000 workers a ping and its heartbeat
// were ~15% of the coordinator's CPU (perf, fleetsim).
type pingPacer struct {
	every int // ticks between pings while streaming
	since int // ticks since the last ping while streaming
}

func newPingPacer(interval, timeout time.Duration) pingPacer {
	return pingPacer{every: max(1, int(timeout/2/interval))}
}

// due reports whether this tick pings; streamed says an interval came
// since the last tick.
func (p *pingPacer) due(streamed bool) bool {
	if !streamed {
		p.since = 0
		return true
	}
	if p.since++; p.since >= p.every {
		p.since = 0
		return true
	}
	return false
}

// handle dispatches one worker message.
func (c *Coordinator) handle(dec *hist.Decoder, s *session, m *writepathv1.ConnectRequest, now time.Time) {
	switch msg := m.GetMsg().(type) {
	case *writepathv1.ConnectRequest_Heartbeat:
		s.heartbeat(msg.Heartbeat, now)
	case *writepathv1.ConnectRequest_ValidateResult:
		c.validated(s, msg.ValidateResult)
	case *writepathv1.ConnectRequest_PhaseReady:
		c.toRun(msg.PhaseReady.GetRunId(), readyEvent(s.name, msg.PhaseReady))
	case *writepathv1.ConnectRequest_PhaseStarted:
		c.toRun(msg.PhaseStarted.GetRunId(), event{kind: evStarted, worker: s.name,
			phase: msg.PhaseStarted.GetPhase(), at: msg.PhaseStarted.GetStarted().AsTime()})
	case *writepathv1.ConnectRequest_PhaseDone:
		d := msg.PhaseDone
		// The merge hears it here, in stream order right after the worker's
		// last interval, not after the run goroutine's queue.
		if r := c.runInFlight(d.GetRunId()); r != nil {
			r.mergeEvent(s.name, d.GetPhase(), false, now)
		}
		c.toRun(d.GetRunId(), event{kind: evDone, worker: s.name, phase: d.GetPhase(),
			err: d.GetError(), cancelled: d.GetCancelled(), endsPhase: d.GetEndsPhase(), summary: d.GetSummary()})
	case *writepathv1.ConnectRequest_Interval:
		s.streamed.Store(true)
		c.interval(dec, s, msg.Interval, now)
	case *writepathv1.ConnectRequest_Hello:
		c.cfg.Log.Warn("second hello ignored", "worker", s.name)
	}
}

// interval validates, decodes and merges one interval on the receiving
// session's goroutine, so decoding spreads over every core.
func (c *Coordinator) interval(dec *hist.Decoder, s *session, iv *writepathv1.Interval, now time.Time) {
	r := c.runInFlight(iv.GetRunId())
	if r == nil {
		c.cfg.Log.Warn("interval for no run in flight", "worker", s.name, "run", iv.GetRunId())
		return
	}
	if err := r.addInterval(dec, s.name, iv, now); err != nil {
		c.refuseInterval(s, iv, err)
	}
}

// refuseInterval logs a refused interval. A malformed or out-of-order one
// ends the worker's session: the run counts the worker lost (named, with
// this reason) and goes on with the others, whose data is untouched since
// nothing of the refused interval was merged.
func (c *Coordinator) refuseInterval(s *session, iv *writepathv1.Interval, err error) {
	c.stats.intervalsRefused.Add(1)
	c.cfg.Log.Warn("interval refused", "worker", s.name, "run", iv.GetRunId(), "seq", iv.GetSeq(), "err", err)
	if errors.Is(err, errStale) {
		return
	}
	c.stats.workersEvicted.Add(1)
	s.end(fmt.Sprintf("disconnected: %v", err))
}

// register adds a session, replacing (and ending) an older one of the
// same name: a worker that reconnected before its old stream timed out.
func (c *Coordinator) register(h *writepathv1.Hello) (*session, error) {
	s := newSession(h, time.Now())
	// Queued before the session is visible, so the Welcome is the first
	// message whatever a concurrent submit sends.
	s.send(&writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Welcome{Welcome: &writepathv1.Welcome{
		HeartbeatInterval: durationpb.New(c.cfg.HeartbeatInterval),
		HeartbeatTimeout:  durationpb.New(c.cfg.HeartbeatTimeout),
	}}})
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, status.Errorf(codes.Unavailable, "register %s: %v", echo.Quote(s.name), ErrClosed)
	}
	old := c.mu.sessions[s.name]
	if old == nil && len(c.mu.sessions) >= c.cfg.MaxWorkers {
		c.mu.Unlock()
		return nil, status.Errorf(codes.ResourceExhausted, "register %s: %d workers connected, the limit (--max-workers)",
			echo.Quote(s.name), c.cfg.MaxWorkers)
	}
	c.mu.sessions[s.name] = s
	c.mu.Unlock()
	if old != nil {
		old.end("replaced by a new connection of the same worker")
	}
	c.cfg.Log.Info("worker connected", "worker", s.name, "host", h.GetHost())
	if err := c.store.PutWorker(s.info(true)); err != nil {
		c.cfg.Log.Warn("store worker", "worker", s.name, "err", err)
	}
	return s, nil
}

// unregister removes an ended session and tells its run the worker is lost.
func (c *Coordinator) unregister(s *session) {
	s.end("stream ended")
	c.mu.Lock()
	if c.mu.sessions[s.name] == s {
		delete(c.mu.sessions, s.name)
	}
	var pending []uint64
	for id, v := range c.mu.validate {
		if v.session == s {
			pending = append(pending, id)
		}
	}
	c.mu.Unlock()
	for _, id := range pending {
		c.validated(s, &writepathv1.ValidateResult{RequestId: id, Error: "disconnected: " + s.reason})
	}
	c.cfg.Log.Info("worker disconnected", "worker", s.name, "reason", s.reason)
	if id := s.runID(); id != "" {
		if r := c.runInFlight(id); r != nil {
			r.mergeEvent(s.name, "", true, time.Now())
		}
		c.toRun(id, event{kind: evLost, worker: s.name, err: s.reason})
	}
	if err := c.store.PutWorker(s.info(false)); err != nil {
		c.cfg.Log.Warn("store worker", "worker", s.name, "err", err)
	}
}

// sessionOf returns the live session of a worker, or nil.
func (c *Coordinator) sessionOf(name string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.sessions[name]
}
