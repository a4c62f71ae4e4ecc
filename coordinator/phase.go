package coordinator

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// phaseRun tracks one phase's workers through assigned -> ready ->
// started -> done. Only the run goroutine touches it.
type phaseRun struct {
	idx     int
	name    string
	at      time.Time
	workers map[string]bool // placed and not lost
	ready   map[string]bool
	done    map[string]bool
	failed  []string // "worker: error"
	merge   *phaseMerge
	offsets map[string]clockSample // used for Start, kept for the skew
}

// runPhase places phase i, passes the start barrier and waits for every
// placed worker to finish or be lost.
func (r *run) runPhase(i int) error {
	rec := r.record()
	ph := rec.GetPhases()[i]
	placed := r.liveWorkers()
	if len(placed) == 0 {
		return fmt.Errorf("phase %s: every worker was lost", ph.GetName())
	}
	if ph.GetPlacement() == writepathv1.Placement_PLACEMENT_ONE {
		placed = placed[:1]
	}
	p := &phaseRun{idx: i, name: ph.GetName(), workers: map[string]bool{},
		ready: map[string]bool{}, done: map[string]bool{}}
	r.assign(p, rec, placed)
	if err := r.barrier(p); err != nil {
		return r.finishPhase(p, writepathv1.PhaseState_PHASE_STATE_FAILED, err)
	}
	r.update(func(rec *writepathv1.Run) { rec.Phases[i].State = writepathv1.PhaseState_PHASE_STATE_READY })
	r.start(p, ph.GetMeasured())
	err := r.await(p)
	state := writepathv1.PhaseState_PHASE_STATE_DONE
	if err != nil {
		state = writepathv1.PhaseState_PHASE_STATE_FAILED
	}
	return r.finishPhase(p, state, err)
}

// assign sends every placed worker its shard of the phase.
func (r *run) assign(p *phaseRun, rec *writepathv1.Run, placed []string) {
	r.update(func(rec *writepathv1.Run) {
		ph := rec.Phases[p.idx]
		ph.State = writepathv1.PhaseState_PHASE_STATE_ASSIGNED
		for i, w := range placed {
			ph.Workers = append(ph.Workers, &writepathv1.PhaseWorker{Worker: w, ShardIndex: uint32(i)})
		}
	})
	ph := rec.GetPhases()[p.idx]
	for i, w := range placed {
		p.workers[w] = true
		a := &writepathv1.Assign{RunId: r.id, Phase: p.name, Spec: rec.GetSpec().GetSpec(),
			ShardIndex: uint32(i), ShardCount: uint32(len(placed)),
			Interval: durationpb.New(r.d), Measured: ph.GetMeasured(), Host: rec.GetSpec().GetHost(),
			Disk: rec.GetSpec().GetDisk(), SparseHistograms: true}
		if !r.sendTo(w, &writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Assign{Assign: a}}) {
			r.lose(p, w, "not connected at assignment")
		}
	}
}

// sendTo queues a message for a worker; false if it is not connected.
func (r *run) sendTo(worker string, m *writepathv1.ConnectResponse) bool {
	s := r.c.sessionOf(worker)
	return s != nil && s.runID() == r.id && s.send(m)
}

// lose drops a worker from the run and the phase.
func (r *run) lose(p *phaseRun, worker, reason string) {
	if p != nil && p.workers[worker] {
		delete(p.workers, worker)
		if p.merge != nil {
			p.merge.lost(worker, time.Now())
		}
	}
	r.markLost(worker, reason)
}

// barrier waits until every placed worker is ready.
func (r *run) barrier(p *phaseRun) error {
	timeout := time.NewTimer(r.c.cfg.ReadyTimeout)
	defer timeout.Stop()
	for len(p.ready) < len(p.workers) {
		if len(p.workers) == 0 {
			return fmt.Errorf("phase %s: every worker was lost before the start", p.name)
		}
		select {
		case ev := <-r.events:
			if err := r.barrierEvent(p, ev); err != nil {
				r.cancelWorkers(p, err.Error())
				return err
			}
		case <-timeout.C:
			err := fmt.Errorf("phase %s: workers not ready after %v: %v", p.name, r.c.cfg.ReadyTimeout, notIn(p.workers, p.ready))
			r.cancelWorkers(p, err.Error())
			return err
		case <-r.ctx.Done():
			r.cancelWorkers(p, r.cancelReason())
			return errCancelled
		}
	}
	return nil
}

func (r *run) barrierEvent(p *phaseRun, ev event) error {
	switch {
	case ev.kind == evLost:
		r.lose(p, ev.worker, ev.err)
	case ev.phase != p.name || !p.workers[ev.worker]:
		// Stale news from an earlier phase or a dropped worker.
	case ev.kind == evReady && ev.err != "":
		return fmt.Errorf("phase %s: worker %s refused: %s", p.name, ev.worker, ev.err)
	case ev.kind == evReady:
		p.ready[ev.worker] = true
		if len(ev.host) > 0 {
			r.phaseWorker(p, ev.worker, func(pw *writepathv1.PhaseWorker) { pw.Host = ev.host })
		}
	case ev.kind == evDone:
		return fmt.Errorf("phase %s: worker %s ended before the start: %s", p.name, ev.worker, ev.err)
	}
	return nil
}

// notIn lists the keys of all that are not in some, sorted.
func notIn(all, some map[string]bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if !some[k] {
			out = append(out, k)
		}
	}
	return out
}
