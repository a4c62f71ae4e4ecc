package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// campaignSubmitWait bounds how long a planned run waits for matching idle
// workers when nothing else of its batch runs: workers may still be
// connecting (a fresh fabric, a restarted coordinator) or just released.
const campaignSubmitWait = 60 * time.Second

// campaignExec executes one campaign; execute is its only writer.
type campaignExec struct {
	c      *Coordinator
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when execute returns

	mu struct {
		sync.Mutex
		rec     *writepathv1.Campaign
		changed chan struct{} // closed and replaced on every change
		running bool
	}
}

func newCampaignExec(c *Coordinator, rec *writepathv1.Campaign) *campaignExec {
	e := &campaignExec{c: c, done: make(chan struct{})}
	e.ctx, e.cancel = context.WithCancelCause(c.ctx)
	e.mu.rec = rec
	e.mu.changed = make(chan struct{})
	e.mu.running = true
	return e
}

// snapshot is a copy of the record, safe to hand out.
func (e *campaignExec) snapshot() *writepathv1.Campaign {
	e.mu.Lock()
	defer e.mu.Unlock()
	return proto.Clone(e.mu.rec).(*writepathv1.Campaign)
}

// watch returns the record, a channel closed at the next change, and
// whether the campaign still runs.
func (e *campaignExec) watch() (*writepathv1.Campaign, <-chan struct{}, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return proto.Clone(e.mu.rec).(*writepathv1.Campaign), e.mu.changed, e.mu.running
}

// update changes the record, stores it, and wakes the watchers. A store
// error is logged, not fatal: the next update writes the whole record
// again, and a lost update only means a run is redone after a restart.
func (e *campaignExec) update(f func(rec *writepathv1.Campaign)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e.mu.rec)
	if err := e.c.store.PutCampaign(e.mu.rec); err != nil {
		e.c.cfg.Log.Error("store campaign", "campaign", e.mu.rec.GetId(), "err", err)
	}
	close(e.mu.changed)
	e.mu.changed = make(chan struct{})
}

func (e *campaignExec) runRec(i int, f func(r *writepathv1.CampaignRun)) {
	e.update(func(rec *writepathv1.Campaign) { f(rec.GetRuns()[i]) })
}

// execute runs the plan batch by batch and records how the campaign ended.
func (e *campaignExec) execute() {
	defer close(e.done)
	defer e.c.forgetCampaign(e.snapshot().GetId())
	plan := e.snapshot().GetPlan()
	err := e.runAll(plan.GetRuns())
	state, reason := writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED, ""
	switch {
	case err == nil:
	case errors.Is(context.Cause(e.ctx), errCampaignCancelled):
		state, reason = writepathv1.CampaignState_CAMPAIGN_STATE_CANCELLED, context.Cause(e.ctx).Error()
	case e.ctx.Err() != nil:
		state, reason = writepathv1.CampaignState_CAMPAIGN_STATE_INTERRUPTED, "coordinator stopped while the campaign ran; resume it"
	default:
		state, reason = writepathv1.CampaignState_CAMPAIGN_STATE_FAILED, err.Error()
	}
	e.update(func(rec *writepathv1.Campaign) {
		rec.State, rec.Reason, rec.Ended = state, reason, timestamppb.Now()
	})
	e.mu.Lock()
	e.mu.running = false
	close(e.mu.changed)
	e.mu.changed = make(chan struct{})
	e.mu.Unlock()
	e.c.cfg.Log.Info("campaign ended", "campaign", e.snapshot().GetId(), "state", state, "reason", reason)
}

// runAll runs consecutive planned runs of the same batch together.
func (e *campaignExec) runAll(plan []*writepathv1.PlannedRun) error {
	for start := 0; start < len(plan); {
		end := start + 1
		for end < len(plan) && plan[end].GetBatch() == plan[start].GetBatch() {
			end++
		}
		if err := e.runBatch(plan[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// runBatch starts every run of a batch that is not complete. A run whose
// workers are busy with another run of the batch (the groups overlap) waits
// for that wave to end and goes in the next.
func (e *campaignExec) runBatch(batch []*writepathv1.PlannedRun) error {
	todo := e.incomplete(batch)
	for len(todo) > 0 {
		var wg sync.WaitGroup
		errs := make([]error, len(todo))
		var deferred []*writepathv1.PlannedRun
		started := 0
		for i, p := range todo {
			id, err := e.submit(p, started > 0)
			if errors.Is(err, ErrNoWorkers) && started > 0 {
				deferred = append(deferred, p)
				continue
			}
			if err != nil {
				errs[i] = err
				break
			}
			started++
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = e.await(p, id)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		todo = deferred
	}
	return nil
}

// incomplete returns the runs of batch still to do. A run recorded as
// submitted but not done is looked up: one that completed before the
// record could say so counts (no round is redone), one that did not is
// moved to previous_run_ids and runs again (no round is lost).
func (e *campaignExec) incomplete(batch []*writepathv1.PlannedRun) []*writepathv1.PlannedRun {
	var out []*writepathv1.PlannedRun
	for _, p := range batch {
		cr := e.snapshot().GetRuns()[p.GetIndex()]
		if cr.GetDone() {
			continue
		}
		if id := cr.GetRunId(); id != "" {
			if run, err := e.c.store.GetRun(id); err == nil && completed(run.GetState()) {
				e.finishRun(p, run, nil)
				continue
			}
			e.runRec(int(p.GetIndex()), func(r *writepathv1.CampaignRun) {
				r.PreviousRunIds = append(r.PreviousRunIds, id)
				r.RunId, r.State, r.Error = "", writepathv1.RunState_RUN_STATE_UNSPECIFIED, ""
			})
		}
		out = append(out, p)
	}
	return out
}

// completed reports whether a run in state s counts for the campaign:
// finished, or partial (the survivors' data is the run's data).
func completed(s writepathv1.RunState) bool {
	return s == writepathv1.RunState_RUN_STATE_FINISHED || s == writepathv1.RunState_RUN_STATE_PARTIAL
}

// submit submits a planned run, waiting for idle workers up to
// campaignSubmitWait unless others of its wave run (then the caller
// defers it instead).
func (e *campaignExec) submit(p *writepathv1.PlannedRun, othersRunning bool) (string, error) {
	deadline := time.Now().Add(campaignSubmitWait)
	for {
		spec := proto.Clone(p.GetSpec()).(*writepathv1.RunSpec)
		if spec.GetName() == "" {
			spec.Name = fmt.Sprintf("%s [%s] %s r%d", e.snapshot().GetPlan().GetName(), p.GetGroup(), p.GetCell(), p.GetRound())
		}
		run, err := e.c.Submit(e.ctx, spec)
		if err == nil {
			e.runRec(int(p.GetIndex()), func(r *writepathv1.CampaignRun) {
				r.RunId, r.State, r.Started = run.GetId(), run.GetState(), timestamppb.Now()
			})
			return run.GetId(), nil
		}
		if !errors.Is(err, ErrNoWorkers) && !errors.Is(err, ErrUnknownKind) || othersRunning || time.Now().After(deadline) {
			return "", fmt.Errorf("planned run %d (%s on %s, round %d): %w", p.GetIndex(), p.GetCell(), p.GetGroup(), p.GetRound(), err)
		}
		select {
		case <-e.ctx.Done():
			return "", context.Cause(e.ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// await waits for a run and records its end; a run that did not complete
// fails the campaign (resume runs it again).
func (e *campaignExec) await(p *writepathv1.PlannedRun, id string) error {
	run, err := e.c.Wait(e.ctx, id)
	if err != nil {
		if cause := context.Cause(e.ctx); cause != nil {
			// A cancelled campaign stops its run too; on Close the
			// coordinator itself stores the run interrupted.
			if errors.Is(cause, errCampaignCancelled) {
				e.c.Cancel(id, cause.Error())
			}
			return cause
		}
		return fmt.Errorf("run %s: %w", id, err)
	}
	if !completed(run.GetState()) {
		err = fmt.Errorf("run %s (%s on %s, round %d) ended %s: %s", id, p.GetCell(), p.GetGroup(), p.GetRound(),
			stateName(run.GetState()), run.GetReason())
	}
	e.finishRun(p, run, err)
	if e.ctx.Err() != nil {
		return context.Cause(e.ctx)
	}
	return err
}

func (e *campaignExec) finishRun(p *writepathv1.PlannedRun, run *writepathv1.Run, err error) {
	e.runRec(int(p.GetIndex()), func(r *writepathv1.CampaignRun) {
		r.RunId, r.State, r.Done, r.Ended = run.GetId(), run.GetState(), err == nil, run.GetEnded()
		if err != nil {
			r.Error = err.Error()
		}
	})
}
