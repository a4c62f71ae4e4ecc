package coordinator

import (
	"context"
	"fmt"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Watch sends a run's stored intervals, then its live events, then its
// final record, to send. It returns when the run has ended, ctx is done,
// or send fails.
func (c *Coordinator) Watch(ctx context.Context, id string, send func(*writepathv1.WatchRunResponse) error) error {
	var live <-chan *writepathv1.WatchRunResponse
	var unstored []*writepathv1.MergedInterval
	if r := c.runInFlight(id); r != nil {
		ch, pending, unsubscribe := r.watch.subscribe()
		defer unsubscribe()
		live, unstored = ch, pending
	}
	rec, err := c.GetRun(id)
	if err != nil {
		return err
	}
	// The record first: a watcher needs the run's interval and placement to
	// read the intervals.
	if err := send(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Run{Run: rec}}); err != nil {
		return err
	}
	sent := map[string]bool{}
	err = c.store.Intervals(id, func(_ int, mi *writepathv1.MergedInterval) error {
		sent[intervalKey(mi)] = true
		return send(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Interval{Interval: mi}})
	})
	if err != nil {
		return err
	}
	// Published before the subscription, not stored before the read: in
	// order after the stored ones (the writer stores in publication order).
	for _, mi := range unstored {
		if !sent[intervalKey(mi)] {
			sent[intervalKey(mi)] = true
			if err := send(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Interval{Interval: mi}}); err != nil {
				return err
			}
		}
	}
	if live == nil {
		return nil
	}
	return c.forwardLive(ctx, id, live, sent, send)
}

func (c *Coordinator) forwardLive(ctx context.Context, id string, live <-chan *writepathv1.WatchRunResponse,
	sent map[string]bool, send func(*writepathv1.WatchRunResponse) error) error {
	for {
		select {
		case ev, ok := <-live:
			if !ok {
				return c.sendFinal(id, send)
			}
			if mi := ev.GetInterval(); mi != nil && sent[intervalKey(mi)] {
				continue
			}
			if err := send(ev); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sendFinal sends the stored record once the live stream closed; a run
// still in flight then means this watcher fell behind.
func (c *Coordinator) sendFinal(id string, send func(*writepathv1.WatchRunResponse) error) error {
	if r := c.runInFlight(id); r != nil {
		select {
		case <-r.finished:
		default:
			return fmt.Errorf("%w: watcher of run %s fell behind", ErrClosed, id)
		}
	}
	rec, err := c.GetRun(id)
	if err != nil {
		return err
	}
	return send(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Run{Run: rec}})
}

func intervalKey(mi *writepathv1.MergedInterval) string {
	return fmt.Sprintf("%s/%d", mi.GetPhase(), mi.GetSeq())
}
