package client

import (
	"strings"
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
)

func TestParseShow(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Show
		bad  bool
	}{
		{in: "lines,summary", want: Show{Lines: true, Summary: true}},
		{in: "lines", want: Show{Lines: true}},
		{in: "none", want: Show{}},
		{in: "iostat", want: Show{Lines: true, Summary: true, IOStat: true}},
		{in: "iostat,innodb", want: Show{Lines: true, Summary: true, IOStat: true, InnoDB: true}},
		{in: "lines,iostat", want: Show{Lines: true, IOStat: true}},
		{in: "iops", bad: true},
	} {
		got, err := ParseShow(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseShow(%q) = %+v, %v; want %+v (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// device builds a device interval from a raw delta as the worker sends it.
func device(name string, window time.Duration, d diskstats.Delta) *writepathv1.DeviceStats {
	s := d.Stats(window)
	return &writepathv1.DeviceStats{Device: name, WritesPerSec: s.WritesPerSec, IntervalNs: window.Nanoseconds(),
		Delta: &writepathv1.DiskDelta{WriteIos: d.WriteIOs, WriteSectors: d.WriteSectors, WriteTicks: d.WriteTicks,
			WriteMerges: d.WriteMerges, IoTicks: d.IOTicks, TimeInQueue: d.TimeInQueue, Fields: uint32(d.Fields)}}
}

func TestTelemetryText(t *testing.T) {
	mi := &writepathv1.MergedInterval{Telemetry: []*writepathv1.WorkerTelemetry{{Worker: "w1",
		Telemetry: &writepathv1.Telemetry{Devices: []*writepathv1.DeviceStats{
			device("vda", time.Second, diskstats.Delta{WriteIOs: 2000, WriteSectors: 16000, WriteTicks: 1000, IOTicks: 900, TimeInQueue: 4000, Fields: 17}),
		}},
		Gauges: map[string]int64{"innodb.log_waits": 3, "innodb.pages_dirty": 1200, "innodb.checkpoint_age_bytes": 50 << 20},
	}}}
	for _, tt := range []struct {
		show      Show
		want, not []string
	}{
		{Show{IOStat: true}, []string{"| vda w/s 2000 wkB/s 8000 wrqm/s 0 w_await 0.50 aqu-sz 4.00 %util 90.0"}, []string{"innodb", "w1:"}},
		{Show{InnoDB: true}, []string{"| innodb log_waits/s 3.00 dirty 1200 ckpt_age 50.0 MiB"}, []string{"vda"}},
		{Show{}, nil, []string{"|"}},
	} {
		got := TelemetryText(mi, tt.show)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("TelemetryText(%+v) = %q; lacks %q", tt.show, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("TelemetryText(%+v) = %q; has %q", tt.show, got, n)
			}
		}
	}
}

// TestDeviceSummaryIsExactOverWindows: the phase mean is the iostat figure
// of the summed counters over the summed windows, not a mean of rates: a
// 1 s interval at 1000 w/s and a 3 s one at 0 w/s give 250 w/s, and
// w_await weighs each write once.
func TestDeviceSummaryIsExactOverWindows(t *testing.T) {
	ivs := []*writepathv1.MergedInterval{
		{Phase: "run", Telemetry: []*writepathv1.WorkerTelemetry{{Worker: "w1", Telemetry: &writepathv1.Telemetry{
			Devices: []*writepathv1.DeviceStats{device("vda", time.Second, diskstats.Delta{WriteIOs: 1000, WriteTicks: 1000, Fields: 17})}}}}},
		{Phase: "run", Telemetry: []*writepathv1.WorkerTelemetry{{Worker: "w1", Telemetry: &writepathv1.Telemetry{
			Devices: []*writepathv1.DeviceStats{device("vda", 3*time.Second, diskstats.Delta{WriteIOs: 10, WriteTicks: 1010, Fields: 17})}}}}},
	}
	r := reduced(t, &writepathv1.Run{Id: "r", Phases: []*writepathv1.PhaseRecord{{Name: "run"}}}, ivs, nil)
	ps := PhaseSummary{Phase: "run"}
	summarizeTelemetry(&ps, r.Phases[0], r.Intervals)
	if len(ps.Devices) != 1 {
		t.Fatalf("devices = %+v; want one", ps.Devices)
	}
	d := ps.Devices[0]
	for col, want := range map[string]float64{"w/s": 1010.0 / 4, "w_await": 2010.0 / 1010} {
		if got := d.Mean[col]; got != want {
			t.Errorf("mean %s = %v; want %v", col, got, want)
		}
	}
	if d.Max["w/s"] != 1000 || d.Max["w_await"] != 101 || d.Seconds != 4 || d.Intervals != 2 {
		t.Errorf("summary = %+v; want max w/s 1000, max w_await 101, 4 s in 2 intervals", d)
	}
}
