package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func encode(t *testing.T, vals ...int64) []byte {
	t.Helper()
	h := hist.New()
	for _, v := range vals {
		h.Record(v)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fleetTelemetry is one device per worker, with a long name so that n
// workers' telemetry is large.
func fleetTelemetry(n int) []*writepathv1.WorkerTelemetry {
	var out []*writepathv1.WorkerTelemetry
	for i := range n {
		out = append(out, &writepathv1.WorkerTelemetry{Worker: fmt.Sprintf("worker-%05d", i),
			Telemetry: &writepathv1.Telemetry{Devices: []*writepathv1.DeviceStats{{Device: fmt.Sprintf("nvme%dn1-with-a-long-name-%0100d", i%8, i),
				IntervalNs: 1e9, Delta: &writepathv1.DiskDelta{WriteIos: uint64(i), WriteSectors: 8 * uint64(i), Fields: 17}}}},
			Gauges: map[string]int64{"innodb.pages_dirty": int64(i)}})
	}
	return out
}

// TestScanChunksTelemetry: a merged interval whose telemetry is larger
// than MaxTelemetryChunk travels without it, then in chunks of at most
// that size; Read puts it back whole, and every worker's device and gauge
// is in the phase's windows.
func TestScanChunksTelemetry(t *testing.T) {
	st := openStore(t)
	rec := &writepathv1.Run{Id: "r", Phases: []*writepathv1.PhaseRecord{{Name: "run", Measured: true}}}
	if err := st.PutRun(rec); err != nil {
		t.Fatal(err)
	}
	const workers = 6000
	at := time.Unix(1000, 0)
	for seq := range 2 {
		mi := &writepathv1.MergedInterval{RunId: "r", Phase: "run", Seq: uint32(seq), Seconds: 1,
			Start: timestamppb.New(at.Add(time.Duration(seq) * time.Second)), End: timestamppb.New(at.Add(time.Duration(seq+1) * time.Second)),
			Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: encode(t, 1e6, 2e6)}}, Telemetry: fleetTelemetry(workers)}
		if err := st.PutInterval("r", 0, mi, nil); err != nil {
			t.Fatal(err)
		}
	}
	var chunks, largest int
	items := Items{}
	err := Scan(context.Background(), st, &writepathv1.ReadRunRequest{RunId: "r", Intervals: true}, func(item *writepathv1.ReadRunResponse) error {
		largest = max(largest, proto.Size(item))
		if c := item.GetTelemetry(); c != nil {
			chunks++
			if n := proto.Size(&writepathv1.IntervalTelemetry{Telemetry: c.GetTelemetry()}); n > MaxTelemetryChunk {
				t.Errorf("chunk of %d bytes; limit %d", n, MaxTelemetryChunk)
			}
		}
		if mi := item.GetInterval(); mi != nil && len(mi.GetTelemetry()) > 0 {
			t.Errorf("interval %d carries %d workers' telemetry inline", mi.GetSeq(), len(mi.GetTelemetry()))
		}
		items = append(items, item)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if chunks < 4 || largest > MaxTelemetryChunk+1024 {
		t.Errorf("%d chunks, largest item %d bytes; want >= 4 chunks, none past %d", chunks, largest, MaxTelemetryChunk+1024)
	}
	r, err := Read(context.Background(), items, "r", MergedOnly)
	if err != nil {
		t.Fatal(err)
	}
	want := fleetTelemetry(workers)
	for _, mi := range r.Intervals {
		if len(mi.GetTelemetry()) != workers || !proto.Equal(mi.GetTelemetry()[workers-1], want[workers-1]) {
			t.Errorf("interval %d: %d workers' telemetry after reassembly; want %d", mi.GetSeq(), len(mi.GetTelemetry()), workers)
		}
	}
	ph := r.Phases[0]
	if len(ph.Devices) != workers || ph.Devices[7].Intervals != 2 || len(ph.Gauges) != workers || ph.Gauges[5].Max != 5 {
		t.Errorf("windows: %d devices, %d gauges; want %d of each over 2 intervals", len(ph.Devices), len(ph.Gauges), workers)
	}
	if ph.Merged.Intervals != 2 || ph.Merged.Histogram("write").Count() != 4 || r.Total("write").Count() != 4 {
		t.Errorf("merged totals = %+v", ph.Merged)
	}
}

// TestScanTotalsFallBackToSnapshots: with per-worker totals asked, a phase
// with stored totals sends those and no snapshot, a phase without sends
// its snapshots, and both read as the same kind of totals.
func TestScanTotalsFallBackToSnapshots(t *testing.T) {
	st := openStore(t)
	rec := &writepathv1.Run{Id: "r", Phases: []*writepathv1.PhaseRecord{{Name: "old"}, {Name: "new"}}}
	if err := st.PutRun(rec); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1000, 0)
	snap := func(phase string, seq int, vals ...int64) store.WorkerSnapshot {
		return store.WorkerSnapshot{Worker: "w", Interval: &writepathv1.Interval{Phase: phase, Seq: uint32(seq),
			Start: timestamppb.New(at), End: timestamppb.New(at.Add(time.Second)),
			Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: encode(t, vals...)}}, Counters: map[string]int64{"write_bytes": 10}}}
	}
	for i, name := range []string{"old", "new"} {
		for seq := range 3 {
			if err := st.PutInterval("r", i, &writepathv1.MergedInterval{Phase: name, Seq: uint32(seq)}, []store.WorkerSnapshot{snap(name, seq, 1e3, 2e3)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	total := &writepathv1.WorkerTotal{Worker: "w", Phase: "new", Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: encode(t, 1e3, 1e3, 1e3, 2e3, 2e3, 2e3)}},
		Counters: map[string]int64{"write_bytes": 30}, Seconds: 3, Intervals: 3}
	if err := st.PutWorkerTotals("r", 1, []*writepathv1.WorkerTotal{total}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	items := Items{}
	err := Scan(context.Background(), st, &writepathv1.ReadRunRequest{RunId: "r", Workers: writepathv1.WorkerDetail_WORKER_DETAIL_TOTALS},
		func(item *writepathv1.ReadRunResponse) error {
			kinds[fmt.Sprintf("%T", item.GetItem())]++
			if wi := item.GetWorkerInterval(); wi != nil && wi.GetInterval().GetPhase() != "old" {
				t.Errorf("snapshot of phase %s sent; it has totals", wi.GetInterval().GetPhase())
			}
			items = append(items, item)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if kinds["*writepathv1.ReadRunResponse_WorkerTotal"] != 1 || kinds["*writepathv1.ReadRunResponse_WorkerInterval"] != 3 {
		t.Errorf("items = %v; want 1 total and 3 snapshots", kinds)
	}
	r, err := Read(context.Background(), items, "r", PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range r.Phases {
		w := ph.Workers["w"]
		if w == nil || w.Seconds != 3 || w.Intervals != 3 || w.Counters["write_bytes"] != 30 || w.Histogram("write").Count() != 6 {
			t.Errorf("phase %s: worker totals %+v; want 3 intervals, 3 s, 30 bytes, 6 writes", ph.Name(), w)
		}
	}
}

func TestScanUnknownRun(t *testing.T) {
	st := openStore(t)
	err := Scan(context.Background(), st, &writepathv1.ReadRunRequest{RunId: "nope"}, func(*writepathv1.ReadRunResponse) error { return nil })
	if err == nil || !errors.Is(err, ErrRunNotFound) {
		t.Errorf("Scan(nope) = %v; want ErrRunNotFound", err)
	}
}
