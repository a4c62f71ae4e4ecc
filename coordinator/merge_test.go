package coordinator

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

func tempStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "wp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(); err != nil {
			t.Errorf("store check: %v", err)
		}
		st.Close()
	})
	return st
}

// workerInterval builds an encoded interval holding values.
func workerInterval(t testing.TB, seq uint32, at time.Time, d time.Duration, values []int64) *writepathv1.Interval {
	t.Helper()
	h := hist.New()
	for _, v := range values {
		h.Record(v)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	start := at.Add(time.Duration(seq) * d)
	return &writepathv1.Interval{RunId: "r", Phase: "load", Seq: seq,
		Start: timestamppb.New(start), End: timestamppb.New(start.Add(d)),
		Ops:      []*writepathv1.OpHistogram{{Op: "write", Hdr: b}},
		Counters: map[string]int64{"write_bytes": int64(len(values)) * 4096}, Gauges: map[string]int64{"threads": 2}}
}

// sparseOf re-encodes a V2 histogram in the sparse wire encoding.
func sparseOf(t testing.TB, v2 []byte) []byte {
	t.Helper()
	h, err := hist.Decode(v2)
	if err != nil {
		t.Fatal(err)
	}
	return h.EncodeSparse()
}

func addOrFail(t *testing.T, m *phaseMerge, worker string, iv *writepathv1.Interval, now time.Time) {
	t.Helper()
	var dec hist.Decoder
	ops, err := decodeInterval(&dec, iv)
	if err != nil {
		t.Fatalf("decodeInterval: %v", err)
	}
	if err := m.add(worker, iv, ops, now); err != nil {
		t.Fatalf("add(%s, seq %d): %v", worker, iv.GetSeq(), err)
	}
}

// TestMergeIsUnionOfWorkers: N workers' intervals with known samples merge
// into the histogram of the union (percentiles, min, max, count exact),
// whether a worker sent the sparse wire encoding (as this coordinator
// asks) or HDR's V2 (workers before it); counters and gauges sum; the
// merged interval is published in V2.
func TestMergeIsUnionOfWorkers(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	var published []*writepathv1.MergedInterval
	workers := []string{"a", "b", "c", "d", "e"}
	m := newPhaseMerge("r", "load", 0, at, d, time.Second, tempStore(t), workers,
		func(mi *writepathv1.MergedInterval) { published = append(published, mi) }, discard())
	rng := rand.New(rand.NewPCG(1, 2))
	union := hist.New()
	for i, w := range workers {
		vals := make([]int64, 1000*(i+1))
		for j := range vals {
			vals[j] = int64(1e3 * (1 + rng.ExpFloat64()*float64(i+1)*50))
			union.Record(vals[j])
		}
		iv := workerInterval(t, 0, at, d, vals)
		if i%2 == 0 {
			iv.Ops[0].Hdr = sparseOf(t, iv.GetOps()[0].GetHdr())
		}
		addOrFail(t, m, w, iv, at.Add(d))
	}
	m.sync()
	if len(published) != 1 {
		t.Fatalf("published %d intervals after every worker reported; want 1", len(published))
	}
	mi := published[0]
	if hist.IsSparseEncoding(mi.GetOps()[0].GetHdr()) {
		t.Errorf("merged interval published in the sparse wire encoding; want HDR's V2")
	}
	got, err := hist.Decode(mi.GetOps()[0].GetHdr())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{50, 99, 99.9, 100} {
		if g, w := got.Percentile(p), union.Percentile(p); g != w {
			t.Errorf("merged p%v = %d; want %d", p, g, w)
		}
	}
	if got.Count() != union.Count() || got.Max() != union.Max() || got.Min() != union.Min() {
		t.Errorf("merged count/min/max = %d/%d/%d; want %d/%d/%d", got.Count(), got.Min(), got.Max(), union.Count(), union.Min(), union.Max())
	}
	if s := mi.GetStats()[0]; s.GetCount() != union.Count() || s.GetP999() != union.Percentile(99.9) {
		t.Errorf("stats = %v; want count %d p99.9 %d", s, union.Count(), union.Percentile(99.9))
	}
	if mi.GetCounters()["write_bytes"] != union.Count()*4096 || mi.GetGauges()["threads"] != 10 {
		t.Errorf("counters %v gauges %v; want sums", mi.GetCounters(), mi.GetGauges())
	}
	m.flush()
}

// TestMergeBoundedWait: an interval missing a worker is published at its
// deadline, naming the worker; the late snapshot is then merged into the
// stored interval; and a lost worker stops being waited for at once.
func TestMergeBoundedWait(t *testing.T) {
	at, d, wait := time.Unix(1000, 0), time.Second, 500*time.Millisecond
	st := tempStore(t)
	var published []*writepathv1.MergedInterval
	m := newPhaseMerge("r", "load", 0, at, d, wait, st, []string{"a", "b", "c"},
		func(mi *writepathv1.MergedInterval) { published = append(published, mi) }, discard())
	addOrFail(t, m, "a", workerInterval(t, 0, at, d, []int64{1000}), at.Add(d))
	addOrFail(t, m, "b", workerInterval(t, 0, at, d, []int64{2000}), at.Add(d))
	m.tick(at.Add(d + wait - time.Millisecond))
	m.sync()
	if len(published) != 0 {
		t.Fatalf("published before the deadline")
	}
	m.tick(at.Add(d + wait))
	m.sync()
	if len(published) != 1 || len(published[0].GetMissing()) != 1 || published[0].GetMissing()[0] != "c" {
		t.Fatalf("at the deadline: published %v; want interval 0 missing [c]", published)
	}
	// c's snapshot arrives late, in the sparse wire encoding: merged into
	// the stored interval, which stays in V2.
	late := workerInterval(t, 0, at, d, []int64{3000})
	late.Ops[0].Hdr = sparseOf(t, late.GetOps()[0].GetHdr())
	addOrFail(t, m, "c", late, at.Add(2*d))
	m.sync()
	stored, err := st.GetInterval("r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if hist.IsSparseEncoding(stored.GetOps()[0].GetHdr()) {
		t.Errorf("stored merged interval in the sparse wire encoding; want HDR's V2")
	}
	if stored.GetStats()[0].GetCount() != 3 || stored.GetLate() != 1 || len(stored.GetMissing()) != 0 || len(stored.GetReporting()) != 3 {
		t.Errorf("stored after late snapshot = %v; want count 3, late 1, none missing", stored)
	}
	// Interval 1: c is lost; a and b complete it without waiting.
	addOrFail(t, m, "a", workerInterval(t, 1, at, d, []int64{1000}), at.Add(2*d))
	m.lost("c", at.Add(2*d))
	addOrFail(t, m, "b", workerInterval(t, 1, at, d, []int64{1000}), at.Add(2*d))
	m.sync()
	if len(published) != 2 || published[1].GetStats()[0].GetCount() != 2 {
		t.Fatalf("after c lost: published %d; want interval 1 at once", len(published))
	}
	// Both finish: nothing more is expected and flush publishes nothing.
	m.done("a", at.Add(2*d))
	m.done("b", at.Add(2*d))
	m.tick(at.Add(time.Hour))
	if n, err := m.flush(); n != 2 || err != nil || len(published) != 2 {
		t.Errorf("flush = %d, %v with %d published; want 2, nil, 2", n, err, len(published))
	}
}

func TestMergeRefusesDuplicatesAndStrangers(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	m := newPhaseMerge("r", "load", 0, at, d, d, tempStore(t), []string{"a", "b"},
		func(*writepathv1.MergedInterval) {}, discard())
	iv := workerInterval(t, 0, at, d, []int64{1})
	var dec hist.Decoder
	ops, _ := decodeInterval(&dec, iv)
	if err := m.add("a", iv, ops, at); err != nil {
		t.Fatal(err)
	}
	if err := m.add("a", iv, ops, at); err == nil {
		t.Errorf("duplicate interval accepted")
	}
	if err := m.add("zed", iv, ops, at); err == nil {
		t.Errorf("interval from an unplaced worker accepted")
	}
	far := workerInterval(t, maxSeqAhead+1, at, d, nil)
	ops, _ = decodeInterval(&dec, far)
	if err := m.add("b", far, ops, at); err == nil {
		t.Errorf("interval far in the future accepted")
	}
	m.flush()
	if err := m.add("b", iv, ops, at); err == nil {
		t.Errorf("interval after flush accepted")
	}
}

func TestClockIntersectsRoundTrips(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	t0 := time.Unix(100, 0)
	// sample is one round trip to a worker whose clock is off ahead of
	// the coordinator's: out and back are the two legs' delays.
	type sample struct{ off, out, back float64 }
	for _, tc := range []struct {
		name        string
		samples     []sample
		offset, rtt float64 // want, ms
	}{
		{"one round trip: its middle", []sample{{250, 10, 2}}, 254, 12},
		{"shortest round trip alone would say +40", []sample{{0, 80, 0}, {0, 0, 100}}, 0, 80},
		// Every ping queued 30-70 ms on one leg or the other (a loaded
		// host): each alone is 15-35 ms off, together they pin it.
		{"legs queued in turn", []sample{{-7, 30, 1}, {-7, 1, 40}, {-7, 70, 1}, {-7, 2, 55}}, -7, 31},
		// The worker's clock stepped by 500 ms between two pings: no
		// common range, so the shortest round trip's.
		{"no common range: shortest round trip", []sample{{0, 5, 5}, {500, 1, 1}}, 500, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c clock
			for i, s := range tc.samples {
				at := t0.Add(time.Duration(i) * time.Second)
				c.add(at, at.Add(ms(s.out+s.off)), at.Add(ms(s.out+s.back)))
			}
			est, ok := c.estimate()
			if !ok || est.offset != ms(tc.offset) || est.rtt != ms(tc.rtt) {
				t.Errorf("estimate = offset %v rtt %v (%v); want offset %v rtt %v", est.offset, est.rtt, ok, ms(tc.offset), ms(tc.rtt))
			}
		})
	}
}

func TestClockPicksShortestRoundTrip(t *testing.T) {
	var c clock
	t0 := time.Unix(100, 0)
	// Worker clock is 250 ms ahead; the second sample's reply was queued.
	c.add(t0, t0.Add(250*time.Millisecond+5*time.Millisecond), t0.Add(10*time.Millisecond))
	c.add(t0, t0.Add(250*time.Millisecond+1*time.Millisecond), t0.Add(80*time.Millisecond))
	c.add(t0, t0.Add(250*time.Millisecond+1*time.Millisecond), t0.Add(2*time.Millisecond))
	est, ok := c.estimate()
	if !ok || est.rtt != 2*time.Millisecond || est.offset != 250*time.Millisecond {
		t.Errorf("estimate = %+v, %v; want rtt 2ms offset 250ms", est, ok)
	}
}

// TestTotalsWithReusedDecoders: as sessions do, each worker decodes every
// interval into its one decoder; its snapshot is summed into its phase
// total later (once its interval is published, or before its next decode),
// so every total is exact: worker a's three intervals, b's two (b is then
// lost), and a late one of c's.
func TestTotalsWithReusedDecoders(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	st := tempStore(t)
	m := newPhaseMerge("r", "load", 0, at, d, d, st, []string{"a", "b", "c"},
		func(*writepathv1.MergedInterval) {}, discard())
	decs := map[string]*hist.Decoder{"a": {}, "b": {}, "c": {}}
	add := func(w string, seq uint32, vals []int64, now time.Time) {
		t.Helper()
		m.settleTotal(w)
		ops, err := decodeInterval(decs[w], workerInterval(t, seq, at, d, vals))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.add(w, workerInterval(t, seq, at, d, vals), ops, now); err != nil {
			t.Fatal(err)
		}
	}
	add("a", 0, []int64{1000, 2000}, at.Add(d))
	add("b", 0, []int64{1000}, at.Add(d))
	add("a", 1, []int64{1000, 2000, 3000}, at.Add(2*d)) // before interval 0 is published
	m.tick(at.Add(3 * d))                               // 0 published without c
	add("c", 0, []int64{5000, 6000, 7000, 8000}, at.Add(3*d))
	add("b", 1, []int64{4000, 4000}, at.Add(3*d))
	m.lost("b", at.Add(3*d))
	add("a", 2, []int64{9000}, at.Add(3*d))
	m.lost("c", at.Add(3*d))
	if _, err := m.flush(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	if err := st.WorkerTotals("r", func(_ int, tot *writepathv1.WorkerTotal) error {
		h, err := hist.Decode(tot.GetOps()[0].GetHdr())
		if err != nil {
			return err
		}
		got[tot.GetWorker()] = fmt.Sprint(tot.GetIntervals(), h.Count(), h.Max()/1000)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "3 6 9", "b": "2 3 4", "c": "1 4 8"}
	if !maps.Equal(got, want) {
		t.Errorf("totals (intervals, count, max/1000) = %v; want %v", got, want)
	}
}
