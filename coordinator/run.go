package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// eventKind names what a worker told a run.
type eventKind int

const (
	evReady eventKind = iota + 1
	evStarted
	evDone
	evLost
)

// event is one thing a worker session tells a run goroutine.
type event struct {
	kind      eventKind
	worker    string
	phase     string
	err       string
	cancelled bool
	endsPhase bool // evDone: err ended the phase for every worker (PhaseDone.ends_phase)
	summary   []byte
	at        time.Time                     // evStarted: the worker's actual start, its clock
	host      []*writepathv1.HostKnobResult // evReady: the host knobs as applied
}

// errCancelled ends a run that a client cancelled.
var errCancelled = errors.New("cancelled")

// run is one run in flight. Its goroutine (execute) owns the lifecycle;
// worker sessions talk to it through events and, for intervals, through the
// current phase's merge.
type run struct {
	c       *Coordinator
	id      string
	workers []string // selected workers, by name
	d       time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc

	events   chan event
	finished chan struct{} // closed when execute returns
	watch    watchers

	mu struct {
		sync.Mutex
		rec   *writepathv1.Run // the record; persisted on every state change
		dirty bool             // rec has per-worker news not yet persisted
		merge *phaseMerge      // the measured phase in progress, if any
	}
}

// eventQueue bounds a run's inbox: a few events per worker per phase.
const eventQueue = 4096

func newRun(c *Coordinator, rec *writepathv1.Run, workers []string, d time.Duration) *run {
	r := &run{c: c, id: rec.GetId(), workers: workers, d: d,
		events: make(chan event, eventQueue), finished: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancelCause(c.ctx)
	r.mu.rec = rec
	return r
}

// toRun delivers an event to a run in flight; events for ended runs are
// dropped (a late PhaseDone after a cancel, say).
func (c *Coordinator) toRun(id string, ev event) {
	r := c.runInFlight(id)
	if r == nil {
		return
	}
	select {
	case r.events <- ev:
	case <-r.finished:
	}
}

func (c *Coordinator) runInFlight(id string) *run {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.runs[id]
}

// update changes the run record under its lock, persists it and tells the
// watchers.
func (r *run) update(f func(rec *writepathv1.Run)) {
	r.mu.Lock()
	f(r.mu.rec)
	r.mu.dirty = false
	snap := proto.Clone(r.mu.rec).(*writepathv1.Run)
	r.mu.Unlock()
	r.persist(snap)
}

// note changes the record in memory only: per-worker news (start skew,
// done) of a phase with many workers would otherwise cost one commit each.
// flushNote persists it within a tick, and every state change persists it.
func (r *run) note(f func(rec *writepathv1.Run)) {
	r.mu.Lock()
	f(r.mu.rec)
	r.mu.dirty = true
	r.mu.Unlock()
}

// flushNotes persists noted changes, if any.
func (r *run) flushNotes() {
	r.mu.Lock()
	if !r.mu.dirty {
		r.mu.Unlock()
		return
	}
	r.mu.dirty = false
	snap := proto.Clone(r.mu.rec).(*writepathv1.Run)
	r.mu.Unlock()
	r.persist(snap)
}

func (r *run) persist(snap *writepathv1.Run) {
	if err := r.c.store.PutRun(snap); err != nil {
		r.c.cfg.Log.Error("store run", "run", r.id, "err", err)
	}
	r.watch.broadcast(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Run{Run: snap}})
}

func (r *run) record() *writepathv1.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return proto.Clone(r.mu.rec).(*writepathv1.Run)
}

// addInterval merges a worker's interval into the current phase.
func (r *run) addInterval(dec *hist.Decoder, worker string, iv *writepathv1.Interval, now time.Time) error {
	r.mu.Lock()
	m := r.mu.merge
	r.mu.Unlock()
	if m == nil || m.phase != iv.GetPhase() {
		return fmt.Errorf("%w: %w: phase %s is not being measured", ErrBadInterval, errStale, echo.Quote(iv.GetPhase()))
	}
	m.settleTotal(worker) // its held snapshot's histograms are in dec
	ops, err := decodeInterval(dec, iv)
	if err != nil {
		return err
	}
	return m.add(worker, iv, ops, now)
}

// mergeEvent tells the current merge that a worker finished phase (or,
// lost, any phase) so it stops waiting for it.
func (r *run) mergeEvent(worker, phase string, lost bool, now time.Time) {
	r.mu.Lock()
	m := r.mu.merge
	r.mu.Unlock()
	switch {
	case m == nil:
	case lost:
		m.lost(worker, now)
	case m.phase == phase:
		m.done(worker, now)
	}
}

// execute runs the phases in order and settles the final state.
func (r *run) execute() {
	// Deferred in reverse: the workers are released and the run leaves the
	// runs in flight before its watchers are told and finished closes, so
	// whoever sees the end finds the run over and its workers free.
	defer close(r.finished)
	defer r.watch.close()
	defer r.c.forgetRun(r)
	r.update(func(rec *writepathv1.Run) {
		rec.State = writepathv1.RunState_RUN_STATE_RUNNING
		rec.Started = timestamppb.Now()
	})
	var err error
	for i := range r.record().GetPhases() {
		if err = r.runPhase(i); err != nil {
			break
		}
	}
	r.update(func(rec *writepathv1.Run) { settle(rec, err, r.c.ctx.Err() != nil, context.Cause(r.ctx)) })
	r.c.stats.ended(r.record().GetState())
	r.c.cfg.Log.Info("run ended", "run", r.id, "state", r.record().GetState(), "reason", r.record().GetReason())
	r.c.retain()
}

// retain applies the store's retention (Config.KeepWorkerIntervals).
func (c *Coordinator) retain() {
	keep := c.cfg.KeepWorkerIntervals
	if keep <= 0 {
		return
	}
	ids, err := c.store.PruneWorkerIntervals(keep, time.Now())
	if err != nil {
		c.cfg.Log.Error("retention", "err", err)
		return
	}
	if len(ids) > 0 {
		c.cfg.Log.Info("retention: dropped per-worker intervals", "runs", len(ids), "oldest", ids[0], "newest", ids[len(ids)-1], "keep", keep)
	}
}

// settle sets a run's final state from how its phases ended.
func settle(rec *writepathv1.Run, err error, closing bool, cause error) {
	rec.Ended = timestamppb.Now()
	switch {
	case errors.Is(err, errCancelled) && closing:
		rec.State = writepathv1.RunState_RUN_STATE_INTERRUPTED
		rec.Reason = "coordinator stopped while the run was in flight"
	case errors.Is(err, errCancelled):
		rec.State = writepathv1.RunState_RUN_STATE_CANCELLED
		rec.Reason = cause.Error()
	case err != nil:
		rec.State = writepathv1.RunState_RUN_STATE_FAILED
		rec.Reason = err.Error()
	case len(rec.GetLost()) > 0:
		rec.State = writepathv1.RunState_RUN_STATE_PARTIAL
		rec.Reason = fmt.Sprintf("lost %d of %d workers: %v", len(rec.GetLost()), len(rec.GetWorkers()), rec.GetLost())
	default:
		rec.State = writepathv1.RunState_RUN_STATE_FINISHED
	}
}

// forgetRun releases the run's workers and drops it from the runs in
// flight; it stays in the store.
func (c *Coordinator) forgetRun(r *run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.runs, r.id)
	for _, w := range r.workers {
		if s := c.mu.sessions[w]; s != nil && s.runID() == r.id {
			s.setRunID("")
		}
	}
}

// markLost records a lost worker in the run record.
func (r *run) markLost(worker, reason string) {
	r.update(func(rec *writepathv1.Run) {
		if slices.Contains(rec.Lost, worker) {
			return
		}
		rec.Lost = append(rec.Lost, worker)
		for _, w := range rec.GetWorkers() {
			if w.GetName() == worker {
				w.Lost, w.LostReason = true, reason
			}
		}
	})
	r.c.cfg.Log.Warn("worker lost", "run", r.id, "worker", worker, "reason", reason)
}

// liveWorkers returns the run's workers not lost, in name order.
func (r *run) liveWorkers() []string {
	rec := r.record()
	var out []string
	for _, w := range r.workers {
		if !slices.Contains(rec.GetLost(), w) {
			out = append(out, w)
		}
	}
	return out
}

// Cancel stops a run in flight on every worker. Cancelling an ended run is
// not an error; it returns the stored record.
func (c *Coordinator) Cancel(id, reason string) (*writepathv1.Run, error) {
	if reason == "" {
		reason = "cancelled by client"
	}
	if r := c.runInFlight(id); r != nil {
		r.cancel(errors.New(reason))
		return r.record(), nil
	}
	rec, err := c.GetRun(id)
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// GetRun returns a run's record from the store. Only a run the store does
// not have is ErrRunNotFound; any other failure (a damaged store, one
// closed) comes back as the store said it, so that a client is not told a
// run it has is missing.
func (c *Coordinator) GetRun(id string) (*writepathv1.Run, error) {
	rec, err := c.store.GetRun(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrRunNotFound, echo.Clip(id))
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Wait blocks until the run with id has ended (or ctx is done) and
// returns its final record.
func (c *Coordinator) Wait(ctx context.Context, id string) (*writepathv1.Run, error) {
	if r := c.runInFlight(id); r != nil {
		select {
		case <-r.finished:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.GetRun(id)
}
