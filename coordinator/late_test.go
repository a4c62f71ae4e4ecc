package coordinator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestMergeLateBatch: late snapshots merged into a stored interval in one
// batch give the interval every worker would have made on time (exact
// histogram, counters and gauges summed, late counted, missing cleared);
// a duplicate in the batch, or of a worker already stored, is reported
// and the rest are merged.
func TestMergeLateBatch(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	st := tempStore(t)
	workers := []string{"a", "b", "c", "d", "e"}
	m := newPhaseMerge("r", "load", 0, at, d, d, st, workers, func(*writepathv1.MergedInterval) {}, discard())
	union := hist.New()
	iv := func(i int) *writepathv1.Interval {
		vals := make([]int64, 100*(i+1))
		for j := range vals {
			vals[j] = int64(1000 * (i + 1) * (j + 1))
		}
		return workerInterval(t, 0, at, d, vals)
	}
	record := func(i int) {
		for j := range 100 * (i + 1) {
			union.Record(int64(1000 * (i + 1) * (j + 1)))
		}
	}
	addOrFail(t, m, "a", iv(0), at.Add(d))
	record(0)
	m.tick(at.Add(2 * d)) // the deadline: published without b..e
	m.sync()

	batch := []*lateJob{{worker: "b", iv: iv(1)}, {worker: "c", iv: iv(2)}, {worker: "b", iv: iv(1)},
		{worker: "a", iv: iv(0)}, {worker: "d", iv: iv(3)}}
	record(1)
	record(2)
	record(3)
	var dec hist.Decoder
	err := m.mergeLate(&dec, batch)
	if !errors.Is(err, ErrBadInterval) || strings.Count(err.Error(), "twice") != 2 {
		t.Errorf("mergeLate(b, c, b again, a again, d) = %v; want the two repeats refused", err)
	}
	got, err := st.GetInterval("r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hist.Decode(got.GetOps()[0].GetHdr())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{0, 50, 99, 100} {
		if g, w := h.Percentile(p), union.Percentile(p); g != w {
			t.Errorf("stored p%v = %d; want %d (the union)", p, g, w)
		}
	}
	want := fmt.Sprint(union.Count(), 3, []string{"e"}, []string{"a", "b", "c", "d"}, union.Count()*4096, 8)
	if g := fmt.Sprint(h.Count(), got.GetLate(), got.GetMissing(), got.GetReporting(),
		got.GetCounters()["write_bytes"], got.GetGauges()["threads"]); g != want {
		t.Errorf("stored count, late, missing, reporting, write_bytes, threads = %s; want %s", g, want)
	}
	if s := got.GetStats()[0]; s.GetCount() != union.Count() || s.GetP99() != union.Percentile(99) {
		t.Errorf("stored stats %v; want count %d p99 %d", s, union.Count(), union.Percentile(99))
	}
	var snaps []string
	if err := st.WorkerIntervals("r", 0, func(_ int, sn store.WorkerSnapshot) error {
		snaps = append(snaps, sn.Worker)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(snaps)
	if fmt.Sprint(snaps) != "[a b c d]" {
		t.Errorf("stored snapshots of %v; want [a b c d], each once", snaps)
	}
	m.flush()
}

// TestWriterBatchesQueuedLateSnapshots: late snapshots that wait while the
// writer is busy are merged into the stored interval (all of them, once),
// and what was queued behind them still runs in order.
func TestWriterBatchesQueuedLateSnapshots(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	st := tempStore(t)
	release := make(chan struct{})
	var published []*writepathv1.MergedInterval
	m := newPhaseMerge("r", "load", 0, at, d, d, st, []string{"a", "b", "c", "d"},
		func(mi *writepathv1.MergedInterval) { published = append(published, mi) }, discard())
	m.stored = func(mis []*writepathv1.MergedInterval) {
		if mis[0].GetSeq() == 0 {
			<-release // the writer is busy while late snapshots queue up
		}
	}
	addOrFail(t, m, "a", workerInterval(t, 0, at, d, []int64{1000}), at.Add(d))
	m.tick(at.Add(2 * d))
	for _, w := range []string{"b", "c", "d"} {
		addOrFail(t, m, w, workerInterval(t, 0, at, d, []int64{2000}), at.Add(2*d))
	}
	for _, w := range []string{"a", "b", "c", "d"} {
		addOrFail(t, m, w, workerInterval(t, 1, at, d, []int64{3000}), at.Add(2*d))
	}
	close(release)
	m.sync()
	got, err := st.GetInterval("r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g := fmt.Sprint(got.GetStats()[0].GetCount(), got.GetLate(), got.GetMissing(), got.GetReporting()); g != "4 3 [] [a b c d]" {
		t.Errorf("stored interval 0: count, late, missing, reporting = %s; want 4 3 [] [a b c d]", g)
	}
	if len(published) != 2 || published[1].GetSeq() != 1 || published[1].GetStats()[0].GetCount() != 4 {
		t.Errorf("published %d intervals; want 0 then 1 with 4 values", len(published))
	}
	if n, err := m.flush(); n != 2 || err != nil {
		t.Errorf("flush = %d, %v; want 2, nil", n, err)
	}
}
