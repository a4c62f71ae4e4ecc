package client

import (
	"math"
	"testing"
	"time"

	"github.com/writepath/writepath/campaign"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/diskstats"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestWindowTelemetry: a campaign cell's telemetry columns come from the
// window's raw counters summed (w_await is the window's write ticks over
// its writes, never a mean of per-interval awaits), on the busiest device;
// an InnoDB counter is its increase over the window's time (the interval
// before the window only starts it), a level its mean.
func TestWindowTelemetry(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ph := &writepathv1.PhaseRecord{Name: "run", Measured: true, At: timestamppb.New(at)}
	var ivs []*writepathv1.MergedInterval
	for k, iv := range []struct {
		writes, ticks  uint64
		lwTotal, dirty int64
	}{{1000, 9000, 100, 10}, {1000, 1000, 110, 20}, {3000, 3000, 150, 40}} {
		start := at.Add(time.Duration(k) * time.Second)
		ivs = append(ivs, &writepathv1.MergedInterval{Phase: "run", Seq: uint32(k), Seconds: 1,
			Start: timestamppb.New(start), End: timestamppb.New(start.Add(time.Second)),
			Telemetry: []*writepathv1.WorkerTelemetry{{Worker: "w1",
				Telemetry: &writepathv1.Telemetry{Devices: []*writepathv1.DeviceStats{
					device("vda", time.Second, diskstats.Delta{WriteIOs: iv.writes, WriteSectors: iv.writes * 8, WriteTicks: iv.ticks, IOTicks: 500, Fields: 17}),
					device("vdb", time.Second, diskstats.Delta{WriteIOs: 1, WriteSectors: 8, WriteTicks: 100, Fields: 17}),
				}},
				Gauges: map[string]int64{"innodb.log_waits_total": iv.lwTotal, "innodb.pages_dirty": iv.dirty}}}})
	}
	r := &results.Run{Intervals: ivs}
	got := windowTelemetry(r, ph, campaign.Window{From: time.Second}, []string{"w/s", "w_await", "%util", "log_waits/s", "dirty", "ckpt_age"})
	want := map[string]float64{"w/s": 2000, "w_await": 1, "%util": 50, "log_waits/s": 25, "dirty": 30}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-9 {
			t.Errorf("%s = %v; want %v", k, got[k], w)
		}
	}
	if _, ok := got["ckpt_age"]; ok {
		t.Errorf("ckpt_age = %v; the run has none, want it absent", got["ckpt_age"])
	}
	if err := CheckColumns([]string{"w/s", "bogus"}); err == nil {
		t.Error("CheckColumns accepted bogus")
	}
}
