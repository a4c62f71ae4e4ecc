package coordinator

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// start releases the barrier: at = now + margin in the coordinator's clock,
// and each worker is told at + its estimated offset in its own clock. The
// margin covers the slowest round trip several times over, so Start reaches
// every worker before at.
func (r *run) start(p *phaseRun, measured bool) {
	offsets := map[string]clockSample{}
	margin := r.c.cfg.StartMargin
	for w := range p.workers {
		if s := r.c.sessionOf(w); s != nil {
			if est, ok := s.offset(); ok {
				offsets[w] = est
				margin = max(margin, 4*est.rtt)
			}
		}
	}
	p.at = time.Now().Add(margin)
	p.offsets = offsets
	if measured {
		p.merge = newPhaseMerge(r.id, p.name, p.idx, p.at, r.d, r.c.cfg.mergeWait(r.d), r.c.store,
			keys(p.workers), r.publish, r.c.cfg.Log)
		// Set before the merge is shared (under r.mu below).
		p.merge.maxQueued = r.c.cfg.MaxQueuedSnapshots
		p.merge.dropped = func(n int) { r.c.stats.snapshotsDropped.Add(uint64(n)) }
		p.merge.stored = r.watch.stored
		r.mu.Lock()
		r.mu.merge = p.merge
		r.mu.Unlock()
	}
	r.update(func(rec *writepathv1.Run) {
		ph := rec.Phases[p.idx]
		ph.State = writepathv1.PhaseState_PHASE_STATE_STARTED
		ph.At = timestamppb.New(p.at)
		for _, w := range rec.Workers {
			if est, ok := offsets[w.Name]; ok {
				w.ClockOffset, w.Rtt = durationpb.New(est.offset), durationpb.New(est.rtt)
			}
		}
	})
	for w := range p.workers {
		st := &writepathv1.Start{RunId: r.id, Phase: p.name, At: timestamppb.New(p.at),
			LocalAt: timestamppb.New(p.at.Add(offsets[w].offset))}
		if !r.sendTo(w, &writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Start{Start: st}}) {
			r.lose(p, w, "not connected at start")
		}
	}
}

// publish sends a merged interval to the run's watchers (the store has it
// a commit later).
func (r *run) publish(mi *writepathv1.MergedInterval) {
	r.c.stats.merged(mi, time.Now())
	r.watch.publish(mi)
}

// cancelWorkers tells every placed worker to stop the run.
func (r *run) cancelWorkers(p *phaseRun, reason string) {
	for w := range p.workers {
		r.sendTo(w, &writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Cancel{
			Cancel: &writepathv1.Cancel{RunId: r.id, Reason: reason}}})
	}
}

// stopWorkers ends the phase in order on the workers not done with it:
// each ends as at the phase's end and sends its last interval and its
// summary (Cancel.stop).
func (r *run) stopWorkers(p *phaseRun, reason string) {
	for w := range p.workers {
		if !p.done[w] {
			r.sendTo(w, &writepathv1.ConnectResponse{Msg: &writepathv1.ConnectResponse_Cancel{
				Cancel: &writepathv1.Cancel{RunId: r.id, Reason: reason, Stop: true}}})
		}
	}
}

// cancelReason says why the run's context ended.
func (r *run) cancelReason() string {
	if r.c.ctx.Err() != nil {
		return ErrClosed.Error()
	}
	if c := context.Cause(r.ctx); c != nil {
		return c.Error()
	}
	return "cancelled"
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
