package coordinator

import (
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestMergeKeepsTelemetryPerWorker: each worker's devices and gauges stay
// its own in the merged interval (two hosts' "sda" are two disks; a server
// read by both must not count twice), in worker order, also for a snapshot
// merged late; a worker without telemetry adds no entry.
func TestMergeKeepsTelemetryPerWorker(t *testing.T) {
	at, d := time.Unix(1000, 0), time.Second
	st := tempStore(t)
	var published []*writepathv1.MergedInterval
	m := newPhaseMerge("r", "load", 0, at, d, d, st, []string{"a", "b", "c"},
		func(mi *writepathv1.MergedInterval) { published = append(published, mi) }, discard())
	withTel := func(w string, wps float64, dirty int64) *writepathv1.Interval {
		iv := workerInterval(t, 0, at, d, []int64{1000})
		iv.Telemetry = &writepathv1.Telemetry{Devices: []*writepathv1.DeviceStats{{Device: "sda", WritesPerSec: wps,
			Delta: &writepathv1.DiskDelta{WriteIos: uint64(wps)}, IntervalNs: int64(d)}}}
		iv.Gauges = map[string]int64{"innodb.pages_dirty": dirty}
		return iv
	}
	addOrFail(t, m, "c", withTel("c", 300, 30), at.Add(d))
	addOrFail(t, m, "a", withTel("a", 100, 10), at.Add(d))
	m.tick(at.Add(2*d + d/2)) // past seq 0's wait (at+d+d), not seq 1's: published without b
	m.sync()
	addOrFail(t, m, "b", withTel("b", 200, 20), at.Add(4*d)) // late
	m.sync()
	if len(published) != 1 {
		t.Fatalf("published %d intervals; want 1", len(published))
	}
	check := func(what string, mi *writepathv1.MergedInterval, want []string) {
		t.Helper()
		if len(mi.GetTelemetry()) != len(want) {
			t.Fatalf("%s: telemetry of %d workers; want %v", what, len(mi.GetTelemetry()), want)
		}
		for i, wt := range mi.GetTelemetry() {
			wps := map[string]float64{"a": 100, "b": 200, "c": 300}[want[i]]
			if wt.GetWorker() != want[i] || wt.GetTelemetry().GetDevices()[0].GetWritesPerSec() != wps ||
				wt.GetGauges()["innodb.pages_dirty"] != int64(wps/10) {
				t.Errorf("%s: telemetry[%d] = %v; want worker %s with its own sda and gauge", what, i, wt, want[i])
			}
		}
	}
	check("published", published[0], []string{"a", "c"})
	stored, err := st.GetInterval("r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	check("stored after the late merge", stored, []string{"a", "b", "c"})
	m.flush()
}

func TestAddTelemetrySkipsWorkersWithout(t *testing.T) {
	iv := &writepathv1.Interval{}
	if got := addTelemetry(nil, "a", iv); len(got) != 0 {
		t.Errorf("addTelemetry(no telemetry, no gauges) = %v; want nothing", got)
	}
}

func TestDecodeIntervalChecksTelemetryNames(t *testing.T) {
	iv := workerInterval(t, 0, time.Unix(1000, 0), time.Second, []int64{1})
	iv.Telemetry = &writepathv1.Telemetry{Devices: []*writepathv1.DeviceStats{{Device: "bad\x00name"}}}
	if err := checkIntervalShape(iv); err == nil {
		t.Errorf("checkIntervalShape(device %q) = nil; want an error", "bad\\x00name")
	}
}
