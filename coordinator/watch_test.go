package coordinator

import (
	"context"
	"slices"
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestWatchGetsIntervalsPublishedBeforeStored: merged intervals go to the
// watchers before the store commits them, so a watcher that joins in
// between gets them from the watchers' list: interval 0 is stored,
// 1 published and not yet stored when the watcher subscribes, 2 published
// after it while 1 is committed. It sees 0, 1, 2 once each, in order.
func TestWatchGetsIntervalsPublishedBeforeStored(t *testing.T) {
	st := tempStore(t)
	c, err := New(Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rec := &writepathv1.Run{Id: "r", State: writepathv1.RunState_RUN_STATE_RUNNING,
		Phases: []*writepathv1.PhaseRecord{{Name: "load"}}}
	if err := st.PutRun(rec); err != nil {
		t.Fatal(err)
	}
	r := newRun(c, rec, nil, time.Second)
	c.mu.Lock()
	c.mu.runs["r"] = r
	c.mu.Unlock()
	mis := make([]*writepathv1.MergedInterval, 3)
	for i := range mis {
		mis[i] = &writepathv1.MergedInterval{RunId: "r", Phase: "load", Seq: uint32(i)}
	}
	r.watch.publish(mis[0])
	if err := st.PutIntervals("r", 0, mis[:1], nil); err != nil {
		t.Fatal(err)
	}
	r.watch.stored(mis[:1])
	r.watch.publish(mis[1])

	var got []uint32
	runs := 0
	err = c.Watch(context.Background(), "r", func(ev *writepathv1.WatchRunResponse) error {
		if ev.GetRun() != nil {
			if runs++; runs == 1 {
				// Subscribed, the store not yet read: 2 is published,
				// 1 committed.
				r.watch.publish(mis[2])
				if err := st.PutIntervals("r", 0, mis[1:2], nil); err != nil {
					t.Error(err)
				}
				r.watch.stored(mis[1:2])
			}
			return nil
		}
		got = append(got, ev.GetInterval().GetSeq())
		if len(got) == 3 {
			// The run ends: its watchers' channels close.
			c.forgetRun(r)
			close(r.finished)
			r.watch.close()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if !slices.Equal(got, []uint32{0, 1, 2}) || runs != 2 {
		t.Errorf("watched intervals %v and %d records; want [0 1 2] and the record first and last", got, runs)
	}
}
