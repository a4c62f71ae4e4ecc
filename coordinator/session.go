package coordinator

import (
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// sendQueue bounds the messages waiting to go to one worker. Control
// messages are few; a worker that lets this many pile up is not reading
// and is dropped rather than letting the coordinator's memory grow.
const sendQueue = 256

// session is one connected worker: one Connect stream.
type session struct {
	name  string
	hello *writepathv1.Hello
	since time.Time

	out     chan *writepathv1.ConnectResponse
	done    chan struct{} // closed by end
	endOnce sync.Once
	reason  string // why the session ended; written once in end
	// streamed is set by each interval received, cleared by the pinger.
	streamed atomic.Bool

	mu struct {
		sync.Mutex
		lastSeen time.Time
		clock    clock
		pings    map[uint64]time.Time // ping seq -> sent (monotonic)
		pingSeq  uint64
		runID    string // the run this worker is reserved for, if any
	}
}

func newSession(h *writepathv1.Hello, now time.Time) *session {
	s := &session{name: h.GetName(), hello: h, since: now,
		out: make(chan *writepathv1.ConnectResponse, sendQueue), done: make(chan struct{})}
	s.mu.lastSeen = now
	s.mu.pings = map[uint64]time.Time{}
	return s
}

// send queues m for the worker; false if the session has ended.
func (s *session) send(m *writepathv1.ConnectResponse) bool {
	select {
	case <-s.done:
		return false
	default:
	}
	select {
	case s.out <- m:
		return true
	case <-s.done:
		return false
	default:
		s.end("send queue full: worker not reading")
		return false
	}
}

// end closes the session once; the first reason wins.
func (s *session) end(reason string) {
	s.endOnce.Do(func() {
		s.reason = reason
		close(s.done)
	})
}

// ping queues a Ping; its send time is stamped as it leaves (sending).
func (s *session) ping() {
	s.mu.Lock()
	s.mu.pingSeq++
	seq := s.mu.pingSeq
	s.mu.Unlock()
	s.send(&writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Ping{Ping: &writepathv1.Ping{Seq: seq}}})
}

// sending stamps a Ping with the time it is handed to the stream and
// remembers it. Stamped when queued, a ping's time in the queue and its
// wait for this goroutine counted in the outbound leg, which then looked
// tens of milliseconds longer than the answer's on a loaded coordinator,
// and every worker's clock offset was estimated that much ahead.
func (s *session) sending(m *writepathv1.ConnectResponse, now time.Time) {
	p := m.GetPing()
	if p == nil {
		return
	}
	p.Sent = timestamppb.New(now)
	s.mu.Lock()
	s.mu.pings[p.GetSeq()] = now
	// Forget pings that were never answered, keeping the map bounded.
	delete(s.mu.pings, p.GetSeq()-clockSamples)
	s.mu.Unlock()
}

// heartbeat records a ping's round trip.
func (s *session) heartbeat(hb *writepathv1.Heartbeat, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t0, ok := s.mu.pings[hb.GetSeq()]
	if !ok || hb.GetWorkerTime().CheckValid() != nil {
		return
	}
	delete(s.mu.pings, hb.GetSeq())
	s.mu.clock.add(t0, hb.GetWorkerTime().AsTime(), now)
}

func (s *session) seen(now time.Time) {
	s.mu.Lock()
	s.mu.lastSeen = now
	s.mu.Unlock()
}

func (s *session) silentFor(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Sub(s.mu.lastSeen)
}

// offset returns the worker's estimated clock offset and its round trip.
func (s *session) offset() (clockSample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.clock.estimate()
}

func (s *session) runID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.runID
}

func (s *session) setRunID(id string) {
	s.mu.Lock()
	s.mu.runID = id
	s.mu.Unlock()
}

// info describes the session for ListWorkers and the store.
func (s *session) info(connected bool) *writepathv1.WorkerInfo {
	h := s.hello
	wi := &writepathv1.WorkerInfo{Name: h.GetName(), Host: h.GetHost(), Labels: h.GetLabels(),
		Version: h.GetVersion(), Kinds: h.GetKinds(), Connected: connected,
		ConnectedSince: timestamppb.New(s.since)}
	s.mu.Lock()
	wi.LastSeen = timestamppb.New(s.mu.lastSeen)
	wi.RunId = s.mu.runID
	est, ok := s.mu.clock.estimate()
	s.mu.Unlock()
	if ok {
		wi.ClockOffset, wi.Rtt = durationpb.New(est.offset), durationpb.New(est.rtt)
	}
	return wi
}

// supports reports whether the worker advertises kind; it returns the
// kind's phases.
func (s *session) supports(kind string) (*writepathv1.KindInfo, bool) {
	for _, k := range s.hello.GetKinds() {
		if k.GetKind() == kind {
			return k, true
		}
	}
	return nil, false
}

// matches reports whether the worker's labels (and name, as "name")
// contain every pair of sel.
func (s *session) matches(sel map[string]string) bool {
	for k, v := range sel {
		if k == "name" && v == s.name {
			continue
		}
		if got, ok := s.hello.GetLabels()[k]; !ok || got != v {
			return false
		}
	}
	return true
}
