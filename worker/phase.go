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
	sparse      bool       // send histograms in hist's sparse wire encoding (Assign.sparse_histograms)
	trace       PhaseTrace // nil unless a Tracer started for this measured phase
	disk        *writepathv1.DiskSpec
	ctx         context.Context
	cancel      context.CancelCauseFunc
	host        *phaseHost // the run's host knobs, applied at assignment
	started     bool       // guarded by session.mu
}

// assign decodes the spec for a phase and answers PhaseReady.
func (s *session) assign(a *writepathv1.Assign) {
	ready := &writepathv1.PhaseReady{RunId: a.GetRunId(), Phase: a.GetPhase()}
	sendReady := true // false once a SetUp goroutine owns the answer
	defer func() {
		if sendReady {
			s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseReady{PhaseReady: ready}})
		}
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
	if s.running(a.GetRunId()) != "" {
		ready.Error = "phase " + s.running(a.GetRunId()) + " of this run is still running here"
		return
	}
	if err := s.prepareDisk(a.GetDisk()); err != nil {
		s.w.cfg.Log.Warn("phase refused", "run", a.GetRunId(), "phase", a.GetPhase(), "err", err)
		ready.Error = err.Error()
		return
	}
	host, err := s.w.applyHost(a.GetHost())
	if err != nil {
		s.w.cfg.Log.Warn("host knobs refused", "run", a.GetRunId(), "phase", a.GetPhase(), "err", err)
		ready.Error = err.Error()
		return
	}
	ready.Host = host.results()
	ctx, cancel := context.WithCancelCause(s.ctx)
	p := &phase{runID: a.GetRunId(), name: a.GetPhase(), wl: wl, d: d, measured: a.GetMeasured(), sparse: a.GetSparseHistograms(), disk: a.GetDisk(),
		shard: workload.Shard{Index: int(a.GetShardIndex()), Count: int(a.GetShardCount())}, ctx: ctx, cancel: cancel, host: host}
	s.mu.Lock()
	old := s.mu.phases[a.GetRunId()]
	if old != nil && old.started {
		s.mu.Unlock()
		cancel(nil)
		s.restoreHost(p)
		ready.Error, ready.Host = "phase "+old.name+" of this run is still running here", nil
		return
	}
	s.mu.phases[a.GetRunId()] = p
	s.mu.Unlock()
	if old != nil { // an assignment never started, replaced
		old.cancel(nil)
		s.restoreHost(old)
	}
	if su, ok := wl.(workload.SetUpper); ok {
		// Off the session's receive loop: pings and cancellations are
		// answered while the workload connects.
		sendReady = false
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.setUp(p, su, env, ready)
		}()
	}
}

// setUp runs a SetUpper's set-up for an assigned phase, then answers
// PhaseReady; a set-up that fails refuses the phase.
// An assignment cancelled or replaced meanwhile was answered already
// (cancelRun, or the new assignment's PhaseReady): nothing is sent.
func (s *session) setUp(p *phase, su workload.SetUpper, env workload.Env, ready *writepathv1.PhaseReady) {
	err := su.SetUp(p.ctx, p.name, env)
	if p.ctx.Err() != nil {
		return
	}
	if err != nil {
		s.w.cfg.Log.Warn("phase set-up failed", "run", p.runID, "phase", p.name, "err", err)
		ready.Error, ready.Host = err.Error(), nil
		s.forget(p)
		p.cancel(err)
		s.restoreHost(p)
	}
	s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseReady{PhaseReady: ready}})
}

// running names the run's phase started here, if any.
func (s *session) running(runID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.mu.phases[runID]; p != nil && p.started {
		return p.name
	}
	return ""
}

// restoreHost puts a phase's host knobs back and returns what went wrong
// as the phase's error text ("" when nothing did).
func (s *session) restoreHost(p *phase) string {
	if err := p.host.restore(); err != nil {
		s.w.cfg.Log.Error("host knobs not restored", "run", p.runID, "phase", p.name, "err", err)
		return err.Error()
	}
	return ""
}

// releaseUnstarted restores the host knobs of phases assigned but never
// started when the session ends (the coordinator counts them lost).
func (s *session) releaseUnstarted() {
	s.mu.Lock()
	var left []*phase
	for id, p := range s.mu.phases {
		if !p.started {
			left = append(left, p)
			delete(s.mu.phases, id)
		}
	}
	s.mu.Unlock()
	for _, p := range left {
		p.cancel(nil)
		s.restoreHost(p)
	}
}

// prepareDisk checks a phase's disk profile and readies its target.
func (s *session) prepareDisk(spec *writepathv1.DiskSpec) error {
	if err := s.w.cfg.checkDisk(spec); err != nil || spec == nil {
		return err
	}
	return s.w.cfg.Disks.Prepare(spec)
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

// cancelRun stops a run's phase; one not started yet ends at once. With
// stop, the phase's cause is workload.Stopped: a workload that knows it
// ends in order (runPhase then reports the phase done, with its summary).
func (s *session) cancelRun(runID, reason string, stop bool) {
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
	if stop {
		p.cancel(workload.Stopped(reason))
	} else {
		p.cancel(errors.New(reason))
	}
	if notStarted {
		msg := "cancelled before the start: " + reason
		if e := s.restoreHost(p); e != "" {
			msg += "; " + e
		}
		s.done(runID, p.name, msg, true, nil)
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
	s.sendDone(&writepathv1.PhaseDone{RunId: runID, Phase: phase, Error: errText, Cancelled: cancelled, Summary: summary})
}

func (s *session) sendDone(d *writepathv1.PhaseDone) {
	s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseDone{PhaseDone: d}})
}
