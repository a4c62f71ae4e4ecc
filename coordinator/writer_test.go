package coordinator

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/coordinator/store"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestWriterBehindDropsSnapshotsNotIntervals: while the writer is held
// (its stored callback blocks, as a starved disk or CPU would), the snapshots
// waiting for the store stay within maxQueued: an interval's snapshots
// past it are dropped, logged once and counted, not queued. Every merged
// interval is still stored and published in order (the ones that waited
// in one commit), the worker totals count every interval, and the
// snapshots are stored again once the writer caught up.
func TestWriterBehindDropsSnapshotsNotIntervals(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	st := tempStore(t)
	var logs bytes.Buffer
	release := make(chan struct{})
	published := make(chan uint32, 16)
	m := newPhaseMerge("r", "load", 0, at, d, time.Second, st, []string{"a", "b"},
		func(mi *writepathv1.MergedInterval) { published <- mi.GetSeq() }, slog.New(slog.NewTextHandler(&logs, nil)))
	m.stored = func(mis []*writepathv1.MergedInterval) {
		if mis[0].GetSeq() == 0 {
			<-release
		}
	}
	m.maxQueued = 3 // interval 0's two snapshots fit, the next two intervals' do not
	dropped := 0
	m.dropped = func(n int) { dropped += n } // called under the merge lock
	add := func(seq uint32) {
		for _, w := range []string{"a", "b"} {
			addOrFail(t, m, w, workerInterval(t, seq, at, d, []int64{1000, 2000}), at.Add(time.Duration(seq+1)*d))
		}
	}
	for seq := range uint32(3) {
		add(seq) // the writer holds interval 0 once stored
	}
	close(release)
	var order []uint32
	for range 3 {
		order = append(order, <-published)
	}
	m.sync() // interval 0's snapshots are stored: the bound is free again
	add(3)
	order = append(order, <-published)
	if n, err := m.flush(); n != 4 || err != nil {
		t.Fatalf("flush = %d, %v; want 4 intervals", n, err)
	}
	if !slices.Equal(order, []uint32{0, 1, 2, 3}) {
		t.Errorf("published %v; want 0 1 2 3", order)
	}
	if dropped != 4 || m.queued.Load() != 0 {
		t.Errorf("dropped %d snapshots, %d still queued; want 4 (intervals 1 and 2), 0", dropped, m.queued.Load())
	}
	var stored []uint32
	if err := st.WorkerIntervals("r", 0, func(_ int, sn store.WorkerSnapshot) error {
		stored = append(stored, sn.Interval.GetSeq())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, []uint32{0, 0, 3, 3}) {
		t.Errorf("snapshots stored for intervals %v; want 0 0 3 3", stored)
	}
	for seq := range uint32(4) {
		mi, err := st.GetInterval("r", 0, seq)
		if err != nil {
			t.Fatal(err)
		}
		if c := mi.GetStats()[0].GetCount(); c != 4 || len(mi.GetReporting()) != 2 {
			t.Errorf("stored interval %d: count %d, reporting %v; want 4 from a and b", seq, c, mi.GetReporting())
		}
	}
	if err := st.WorkerTotals("r", func(_ int, tot *writepathv1.WorkerTotal) error {
		if tot.GetIntervals() != 4 {
			t.Errorf("worker %s total: %d intervals; want 4", tot.GetWorker(), tot.GetIntervals())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"store behind: per-worker snapshots dropped", "store caught up", "dropped=4"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "store behind"); n != 1 {
		t.Errorf("logged the shedding %d times; want once:\n%s", n, out)
	}
}
