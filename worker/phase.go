package worker

import (
	"context"
	"errors"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
)

// phase is one assigned phase of a run on this worker.
type phase struct {
	runID, name string
	wl          workload.Workload
	shard       workload.Shard
	d           time.Duration
	measured    bool
	ctx         context.Context
	cancel      context.CancelCauseFunc
	started     bool // guarded by session.mu
}

// assign decodes the spec for a phase and answers PhaseReady.
func (s *session) assign(a *writepathv1.Assign) {
	ready := &writepathv1.PhaseReady{RunId: a.GetRunId(), Phase: a.GetPhase()}
	defer func() {
		s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseReady{PhaseReady: ready}})
	}()
	env := s.w.cfg.env()
	env.Shard = workload.Shard{Index: int(a.GetShardIndex()), Count: int(a.GetShardCount())}
	wl, err := build(a.GetSpec(), env)
	if err != nil {
		s.w.cfg.Log.Warn("phase refused", "run", a.GetRunId(), "phase", a.GetPhase(), "err", err)
		ready.Error = err.Error()
		return
	}
	d := a.GetInterval().AsDuration()
	if d <= 0 {
		ready.Error = "assignment without an interval"
		return
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	p := &phase{runID: a.GetRunId(), name: a.GetPhase(), wl: wl, d: d, measured: a.GetMeasured(),
		shard: workload.Shard{Index: int(a.GetShardIndex()), Count: int(a.GetShardCount())}, ctx: ctx, cancel: cancel}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.mu.phases[a.GetRunId()]; old != nil && old.started {
		cancel(nil)
		ready.Error = "phase " + old.name + " of this run is still running here"
		return
	}
	s.mu.phases[a.GetRunId()] = p
}

// start launches an assigned phase at its common start.
func (s *session) start(st *writepathv1.Start) {
	s.mu.Lock()
	p := s.mu.phases[st.GetRunId()]
	ok := p != nil && p.name == st.GetPhase() && !p.started
	if ok {
		p.started = true
	}
	s.mu.Unlock()
	if !ok {
		s.done(st.GetRunId(), st.GetPhase(), "start for a phase not assigned here", false, nil)
		return
	}
	at := st.GetLocalAt()
	if at.CheckValid() != nil {
		at = st.GetAt()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runPhase(p, at.AsTime())
	}()
}

// cancelRun stops a run's phase; one not started yet ends at once.
func (s *session) cancelRun(runID, reason string) {
	s.mu.Lock()
	p := s.mu.phases[runID]
	notStarted := p != nil && !p.started
	if notStarted {
		delete(s.mu.phases, runID)
	}
	s.mu.Unlock()
	if p == nil {
		return
	}
	p.cancel(errors.New(reason))
	if notStarted {
		s.done(runID, p.name, "cancelled before the start: "+reason, true, nil)
	}
}

func (s *session) forget(p *phase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.phases[p.runID] == p {
		delete(s.mu.phases, p.runID)
	}
}

func (s *session) done(runID, phase, errText string, cancelled bool, summary []byte) {
	s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseDone{PhaseDone: &writepathv1.PhaseDone{
		RunId: runID, Phase: phase, Error: errText, Cancelled: cancelled, Summary: summary}}})
}
