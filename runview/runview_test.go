package runview

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
)

// interval builds merged interval k of a 1 s grid: n writes of 1 ms, and
// per worker a device with w writes and a dirty-pages gauge.
func interval(t *testing.T, k int, n int64, workers map[string]uint64) *writepathv1.MergedInterval {
	t.Helper()
	h := hist.New()
	for range n {
		h.Record(1e6)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000+int64(k), 0)
	mi := &writepathv1.MergedInterval{Phase: "run", Seq: uint32(k), Start: timestamppb.New(start),
		End: timestamppb.New(start.Add(time.Second)), Seconds: 1,
		Ops:   []*writepathv1.OpHistogram{{Op: "write", Hdr: b}},
		Stats: []*writepathv1.OpStats{{Op: "write", Count: n, P50: 1e6, P99: 1e6, P999: 1e6}}}
	for _, w := range []string{"w1", "w2"} {
		writes, ok := workers[w]
		if !ok {
			continue
		}
		mi.Telemetry = append(mi.Telemetry, &writepathv1.WorkerTelemetry{Worker: w,
			Telemetry: &writepathv1.Telemetry{Devices: []*writepathv1.DeviceStats{{Device: "vda", IntervalNs: 1e9,
				Delta: &writepathv1.DiskDelta{WriteIos: writes, WriteSectors: 8 * writes, Fields: 17}}}},
			Gauges: map[string]int64{"innodb.pages_dirty": int64(writes), "threads": 4}})
	}
	return mi
}

// TestRunConvertsTelemetry: the report's device and InnoDB series are per
// worker (named when several report), on the interval grid, zero where a
// worker did not report, and ops carry rate and percentiles.
func TestRunConvertsTelemetry(t *testing.T) {
	items := results.NewItems(&writepathv1.Run{Id: "20261130-000000.000", KindName: "fio", State: writepathv1.RunState_RUN_STATE_FINISHED,
		Interval: durationpb.New(time.Second),
		Phases:   []*writepathv1.PhaseRecord{{Name: "run"}}},
		[]*writepathv1.MergedInterval{
			interval(t, 0, 100, map[string]uint64{"w1": 10, "w2": 20}),
			interval(t, 1, 200, map[string]uint64{"w1": 30}),
		}, nil)
	r, err := results.Read(context.Background(), items, "20261130-000000.000", results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(r)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "finished" || got.Interval != time.Second || len(got.Ops) != 1 {
		t.Fatalf("Run = %+v", got)
	}
	if op := got.Ops[0]; op.Rate[0] != 100 || op.Rate[1] != 200 || op.P99[1] != 1 || op.Total.Count() != 300 {
		t.Errorf("ops = %+v; want rates 100, 200, p99 1 ms, 300 in total", op)
	}
	want := map[string][]float64{"w1:vda w/s": {10, 30}, "w2:vda w/s": {20, 0}, "w1:vda wkB/s": {40, 120}}
	for _, s := range got.Devices {
		if w, ok := want[s.Name]; ok {
			if len(s.Values) != 2 || s.Values[0] != w[0] || s.Values[1] != w[1] || s.T[1] != 1 {
				t.Errorf("series %s = %v at %v; want %v at [0 1]", s.Name, s.Values, s.T, w)
			}
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("device series missing: %v (have %d series)", want, len(got.Devices))
	}
	if len(got.InnoDB) != 2 || got.InnoDB[0].Name != "w1:dirty pages" || got.InnoDB[0].Unit != "pages" || got.InnoDB[1].Values[1] != 0 {
		t.Errorf("innodb series = %+v; want w1 and w2 dirty pages (a level, in pages), no threads", got.InnoDB)
	}
}

// TestRunDiskSeries: a disk profile's cap and credits (Telemetry.values
// "disk.*") become the report's Disk series, the raw balance left out.
func TestRunDiskSeries(t *testing.T) {
	ivs := []*writepathv1.MergedInterval{interval(t, 0, 10, map[string]uint64{"w1": 1}), interval(t, 1, 10, map[string]uint64{"w1": 1})}
	for k, v := range []map[string]float64{
		{"disk.cap_iops": 3200, "disk.cap_mbps": 96, "disk.credits": 100, "disk.credits_pct": 50},
		{"disk.cap_iops": 800, "disk.cap_mbps": 24, "disk.credits": 0, "disk.credits_pct": 0},
	} {
		ivs[k].Telemetry[0].Telemetry.Values = v
	}
	r, err := results.Read(context.Background(), results.NewItems(&writepathv1.Run{Id: "20261130-000000.000", KindName: "oltp",
		Interval: durationpb.New(time.Second), Phases: []*writepathv1.PhaseRecord{{Name: "run"}}}, ivs, nil), "20261130-000000.000", results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(r)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"disk.cap_iops": {3200, 800}, "disk.cap_mbps": {96, 24}, "disk.credits_pct": {50, 0}}
	for _, s := range got.Disk {
		w, ok := want[s.Name]
		if !ok || s.Values[0] != w[0] || s.Values[1] != w[1] {
			t.Errorf("disk series %s = %v (%s)", s.Name, s.Values, s.Unit)
		}
		delete(want, s.Name)
	}
	if len(want) > 0 {
		t.Errorf("missing disk series %v", want)
	}
}

// TestRunBandwidthAndInnoDBRates: an op's bytes counter becomes its MB/s
// series; an InnoDB counter (a *_total gauge) is charted as its rate per
// interval with its unit, never as the raw cumulative value.
func TestRunBandwidthAndInnoDBRates(t *testing.T) {
	a, b := interval(t, 0, 100, map[string]uint64{"w1": 10}), interval(t, 1, 100, map[string]uint64{"w1": 10})
	a.Counters = map[string]int64{"write_bytes": 4_000_000}
	b.Counters = map[string]int64{"write_bytes": 8_000_000}
	a.Telemetry[0].Gauges["innodb.os_log_written_total"] = 100_000_000
	b.Telemetry[0].Gauges["innodb.os_log_written_total"] = 103_000_000
	items := results.NewItems(&writepathv1.Run{Id: "20261130-000000.000", KindName: "fio", State: writepathv1.RunState_RUN_STATE_FINISHED,
		Interval: durationpb.New(time.Second), Phases: []*writepathv1.PhaseRecord{{Name: "run"}}},
		[]*writepathv1.MergedInterval{a, b}, nil)
	r, err := results.Read(context.Background(), items, "20261130-000000.000", results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(r)
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Ops[0].MBps; len(m) != 2 || m[0] != 4 || m[1] != 8 {
		t.Errorf("write MB/s = %v; want [4 8]", m)
	}
	found := false
	for _, s := range got.InnoDB {
		if s.Name == "redo written" {
			found = true
			if s.Unit != "MB/s" || s.Values[0] != 0 || s.Values[1] != 3 {
				t.Errorf("redo written = %v %s; want [0 3] MB/s (the first interval has no increase)", s.Values, s.Unit)
			}
		}
	}
	if !found {
		t.Errorf("no redo written series in %+v", got.InnoDB)
	}
}
