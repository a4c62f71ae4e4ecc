package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Campaigns: the CLI expands a campaign spec into an ordered list of run
// specs (PlannedRun) and submits it. The coordinator runs the list in order,
// batch by batch, writing the record after every step, so that a restarted
// coordinator resumes without redoing a completed run. It never looks inside
// a cell: a planned run is a RunSpec like any other.

// campaigns is the coordinator's set of executing campaigns.
type campaigns struct {
	mu struct {
		sync.Mutex
		active map[string]*campaignExec // running campaigns by id
		lastID string                   // last campaign id handed out
	}
}

func newCampaigns() *campaigns {
	cs := &campaigns{}
	cs.mu.active = map[string]*campaignExec{}
	return cs
}

func (cs *campaigns) get(id string) *campaignExec {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.mu.active[id]
}

// newIDLocked is like newRunIDLocked with a "c-" prefix, so that a
// campaign id never equals a run id and `writepath report ID` can tell them
// apart.
func (cs *campaigns) newIDLocked(now time.Time) string {
	for {
		id := "c-" + now.UTC().Format("20060102-150405.000")
		if id > cs.mu.lastID {
			cs.mu.lastID = id
			return id
		}
		now = now.Add(time.Millisecond)
	}
}

// interruptStaleCampaigns marks campaigns the store holds as running (their
// coordinator died) interrupted; ResumeCampaign continues them.
func (c *Coordinator) interruptStaleCampaigns() error {
	list, err := c.store.ListCampaigns(0)
	if err != nil {
		return fmt.Errorf("interrupt stale campaigns: %w", err)
	}
	if len(list) > 0 {
		c.camps.mu.lastID = list[0].GetId()
	}
	for _, cp := range list {
		if cp.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_RUNNING {
			continue
		}
		cp.State = writepathv1.CampaignState_CAMPAIGN_STATE_INTERRUPTED
		cp.Reason = "coordinator restarted while the campaign ran; resume it"
		if err := c.store.PutCampaign(cp); err != nil {
			return fmt.Errorf("interrupt stale campaigns: %w", err)
		}
		c.cfg.Log.Warn("campaign interrupted by restart", "campaign", cp.GetId())
	}
	return nil
}

// SubmitCampaign checks a plan, stores it and starts executing it.
func (c *Coordinator) SubmitCampaign(plan *writepathv1.CampaignPlan) (*writepathv1.Campaign, error) {
	if err := checkPlan(plan); err != nil {
		return nil, err
	}
	rec := &writepathv1.Campaign{Plan: proto.Clone(plan).(*writepathv1.CampaignPlan),
		State: writepathv1.CampaignState_CAMPAIGN_STATE_RUNNING, Created: timestamppb.Now()}
	for _, p := range plan.GetRuns() {
		rec.Runs = append(rec.Runs, &writepathv1.CampaignRun{Index: p.GetIndex()})
	}
	c.camps.mu.Lock()
	rec.Id = c.camps.newIDLocked(time.Now())
	c.camps.mu.Unlock()
	return c.startCampaign(rec)
}

// MaxCampaignRuns bounds the runs one campaign plans (the CLI's expansion
// stops at the same number, campaign.MaxRuns, before allocating them).
const MaxCampaignRuns = 10_000

func checkPlan(plan *writepathv1.CampaignPlan) error {
	if len(plan.GetRuns()) == 0 {
		return fmt.Errorf("%w: campaign %s plans no runs", ErrBadRequest, echo.Quote(plan.GetName()))
	}
	if n := len(plan.GetRuns()); n > MaxCampaignRuns {
		return fmt.Errorf("%w: campaign %s plans %d runs, the limit is %d (the maximum campaign size)",
			ErrBadRequest, echo.Quote(plan.GetName()), n, MaxCampaignRuns)
	}
	for i, p := range plan.GetRuns() {
		if p.GetIndex() != uint32(i) {
			return fmt.Errorf("%w: planned run %d has index %d", ErrBadRequest, i, p.GetIndex())
		}
		if i > 0 && p.GetBatch() < plan.GetRuns()[i-1].GetBatch() {
			return fmt.Errorf("%w: planned run %d goes back to batch %d", ErrBadRequest, i, p.GetBatch())
		}
		if err := checkSpec(p.GetSpec()); err != nil {
			return fmt.Errorf("planned run %d: %w", i, err)
		}
	}
	return nil
}

// ResumeCampaign continues a campaign that is not running: completed runs
// are kept, the others run again.
func (c *Coordinator) ResumeCampaign(id string) (*writepathv1.Campaign, error) {
	if c.camps.get(id) != nil {
		return nil, fmt.Errorf("%w: campaign %s is already running", ErrBadRequest, echo.Clip(id))
	}
	rec, err := c.GetCampaign(id)
	if err != nil {
		return nil, err
	}
	if rec.GetState() == writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		return rec, nil
	}
	rec.State = writepathv1.CampaignState_CAMPAIGN_STATE_RUNNING
	rec.Reason, rec.Ended = "", nil
	return c.startCampaign(rec)
}

func (c *Coordinator) startCampaign(rec *writepathv1.Campaign) (*writepathv1.Campaign, error) {
	e := newCampaignExec(c, rec)
	c.mu.Lock()
	closed := c.mu.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	c.camps.mu.Lock()
	if c.camps.mu.active[rec.GetId()] != nil {
		c.camps.mu.Unlock()
		return nil, fmt.Errorf("%w: campaign %s is already running", ErrBadRequest, rec.GetId())
	}
	if n := len(c.camps.mu.active); n >= c.cfg.MaxActiveCampaigns {
		c.camps.mu.Unlock()
		return nil, fmt.Errorf("%w: %d campaigns running, the limit of active campaigns; cancel one (writepath campaign cancel ID) or wait",
			ErrLimit, n)
	}
	c.camps.mu.active[rec.GetId()] = e
	c.camps.mu.Unlock()
	if err := c.store.PutCampaign(rec); err != nil {
		c.forgetCampaign(rec.GetId())
		return nil, err
	}
	c.goOwned(e.execute)
	c.cfg.Log.Info("campaign started", "campaign", rec.GetId(), "runs", len(rec.GetRuns()))
	return e.snapshot(), nil
}

func (c *Coordinator) forgetCampaign(id string) {
	c.camps.mu.Lock()
	defer c.camps.mu.Unlock()
	delete(c.camps.mu.active, id)
}

// GetCampaign returns a campaign: the live record if it runs, else the
// stored one.
func (c *Coordinator) GetCampaign(id string) (*writepathv1.Campaign, error) {
	if e := c.camps.get(id); e != nil {
		return e.snapshot(), nil
	}
	rec, err := c.store.GetCampaign(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrCampaignNotFound, echo.Clip(id))
	}
	return rec, err
}

// ListCampaigns lists stored campaigns, newest first.
func (c *Coordinator) ListCampaigns(limit int) ([]*writepathv1.Campaign, error) {
	list, err := c.store.ListCampaigns(limit)
	if err != nil {
		return nil, err
	}
	for i, cp := range list {
		if e := c.camps.get(cp.GetId()); e != nil {
			list[i] = e.snapshot()
		}
	}
	return list, nil
}

// CancelCampaign stops a running campaign and the runs it has in flight.
func (c *Coordinator) CancelCampaign(id, reason string) (*writepathv1.Campaign, error) {
	if reason == "" {
		reason = "cancelled by client"
	}
	e := c.camps.get(id)
	if e == nil {
		return c.GetCampaign(id)
	}
	e.cancel(fmt.Errorf("%w: %s", errCampaignCancelled, reason))
	<-e.done
	return c.GetCampaign(id)
}

// WatchCampaign sends the campaign record, then every new version of it,
// until the campaign stops running, ctx ends or send fails.
func (c *Coordinator) WatchCampaign(ctx context.Context, id string, send func(*writepathv1.Campaign) error) error {
	e := c.camps.get(id)
	if e == nil {
		rec, err := c.GetCampaign(id)
		if err != nil {
			return err
		}
		return send(rec)
	}
	for {
		rec, changed, running := e.watch()
		if err := send(rec); err != nil {
			return err
		}
		if !running {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
