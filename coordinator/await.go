package coordinator

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// tickEvery is how often a phase checks its merge's bounded waits: a
// quarter interval, kept between 10 ms and 250 ms.
func tickEvery(d time.Duration) time.Duration {
	return min(max(d/4, 10*time.Millisecond), 250*time.Millisecond)
}

// await waits until every placed worker has finished the phase or been
// lost. A worker failure cancels the others, unless its error ended the
// phase for all (PhaseDone.ends_phase: sysbench's forced shutdown, say):
// then they are stopped in order and their results kept, the phase still
// failed with that error. A cancel waits CancelGrace for workers to
// confirm.
func (r *run) await(p *phaseRun) error {
	t := time.NewTicker(tickEvery(r.d))
	defer t.Stop()
	for !p.allDone() {
		select {
		case ev := <-r.events:
			if r.awaitEvent(p, ev) && len(p.failed) == 1 {
				if ev.endsPhase {
					r.stopWorkers(p, p.failed[0])
				} else {
					r.cancelWorkers(p, "another worker failed: "+p.failed[0])
				}
			}
		case now := <-t.C:
			p.tick(now)
			r.flushNotes()
		case <-r.ctx.Done():
			r.cancelWorkers(p, r.cancelReason())
			r.drain(p, time.Now().Add(r.c.cfg.CancelGrace))
			return errCancelled
		}
	}
	if len(p.failed) > 0 {
		return fmt.Errorf("phase %s: %s", p.name, strings.Join(p.failed, "; "))
	}
	if len(p.workers) == 0 {
		return fmt.Errorf("phase %s: every worker was lost", p.name)
	}
	return nil
}

// drain handles events until every worker confirmed or the deadline.
func (r *run) drain(p *phaseRun, deadline time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for !p.allDone() {
		select {
		case ev := <-r.events:
			r.awaitEvent(p, ev)
		case <-timer.C:
			r.c.cfg.Log.Warn("workers did not confirm the cancel", "run", r.id, "phase", p.name,
				"workers", notIn(p.workers, p.done))
			return
		}
	}
}

// awaitEvent applies one event; it reports whether a worker failed.
func (r *run) awaitEvent(p *phaseRun, ev event) (failed bool) {
	switch {
	case ev.kind == evLost:
		r.lose(p, ev.worker, ev.err)
	case ev.phase != p.name || !p.workers[ev.worker]:
	case ev.kind == evStarted:
		r.recordSkew(p, ev.worker, ev.at)
	case ev.kind == evDone:
		p.done[ev.worker] = true
		if p.merge != nil {
			p.merge.done(ev.worker, time.Now())
		}
		if ev.err != "" && !ev.cancelled {
			p.failed = append(p.failed, ev.worker+": "+ev.err)
			failed = true
		}
		r.phaseWorker(p, ev.worker, func(pw *writepathv1.PhaseWorker) {
			pw.Done, pw.Error, pw.Summary = true, ev.err, ev.summary
		})
	}
	return failed
}

// recordSkew stores when a worker actually started relative to the common
// start, converting its clock to ours with the offset used at the start.
func (r *run) recordSkew(p *phaseRun, worker string, started time.Time) {
	skew := started.Add(-p.offsets[worker].offset).Sub(p.at)
	r.phaseWorker(p, worker, func(pw *writepathv1.PhaseWorker) { pw.StartSkew = durationpb.New(skew) })
}

func (r *run) phaseWorker(p *phaseRun, worker string, f func(*writepathv1.PhaseWorker)) {
	r.note(func(rec *writepathv1.Run) {
		for _, pw := range rec.Phases[p.idx].Workers {
			if pw.Worker == worker {
				f(pw)
			}
		}
	})
}

// finishPhase flushes the merge and records how the phase ended.
func (r *run) finishPhase(p *phaseRun, state writepathv1.PhaseState, err error) error {
	var n uint32
	if p.merge != nil {
		var ferr error
		n, ferr = p.merge.flush()
		r.mu.Lock()
		r.mu.merge = nil
		r.mu.Unlock()
		if ferr != nil && err == nil {
			err, state = fmt.Errorf("phase %s: store: %w", p.name, ferr), writepathv1.PhaseState_PHASE_STATE_FAILED
		}
	}
	if errors.Is(err, errCancelled) {
		state = writepathv1.PhaseState_PHASE_STATE_CANCELLED
	}
	r.update(func(rec *writepathv1.Run) {
		ph := rec.Phases[p.idx]
		ph.State, ph.Ended, ph.Intervals = state, timestamppb.Now(), n
		if err != nil && !errors.Is(err, errCancelled) {
			ph.Error = err.Error()
		}
		for _, pw := range ph.Workers {
			pw.Lost = !p.workers[pw.Worker] && !pw.Done
		}
	})
	return err
}

func (p *phaseRun) allDone() bool {
	for w := range p.workers {
		if !p.done[w] {
			return false
		}
	}
	return true
}

func (p *phaseRun) tick(now time.Time) {
	if p.merge != nil {
		p.merge.tick(now)
	}
}
