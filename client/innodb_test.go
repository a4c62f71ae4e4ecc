package client

import (
	"math"
	"testing"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

func gaugeIntervals(secs float64, gauges ...map[string]int64) []*writepathv1.MergedInterval {
	var out []*writepathv1.MergedInterval
	for _, g := range gauges {
		out = append(out, &writepathv1.MergedInterval{Seconds: secs, Telemetry: []*writepathv1.WorkerTelemetry{{Worker: "w1", Gauges: g}}})
	}
	return out
}

// TestInnoDBCountersAreRates: a counter's rate over a window is its
// cumulative reading's increase over the time between the readings, at
// any interval length (here 500 ms, where the delta gauges, increases over
// the last 1 s sample, would count each sample twice); a restart (the
// counter went down) drops that interval; levels are means; the LSN is a
// rate, never a level.
func TestInnoDBCountersAreRates(t *testing.T) {
	ivs := gaugeIntervals(0.5,
		map[string]int64{"innodb.os_log_written_total": 1_000_000, "innodb.os_log_written_bytes": 999, "innodb.lsn": 5e9, "innodb.pages_dirty": 100},
		map[string]int64{"innodb.os_log_written_total": 2_000_000, "innodb.os_log_written_bytes": 999, "innodb.lsn": 5e9 + 3e6, "innodb.pages_dirty": 300},
		map[string]int64{"innodb.os_log_written_total": 4_000_000, "innodb.os_log_written_bytes": 999, "innodb.lsn": 5e9 + 4e6, "innodb.pages_dirty": 200},
		map[string]int64{"innodb.os_log_written_total": 10, "innodb.lsn": 10, "innodb.pages_dirty": 0}, // restarted
	)
	g := GaugesByWorker(ivs)
	if len(g) != 1 {
		t.Fatalf("workers = %+v", g)
	}
	redo, _ := InnoDBMetricByKey("redo_MB/s")
	mean, peak, ok := redo.Window(g[0], 0)
	if !ok || mean != 3 || peak != 4 {
		t.Errorf("redo over the phase = %v (max %v, %v); want (1+2) MB over 1 s = 3 MB/s, max 4", mean, peak, ok)
	}
	if mean, _, _ := redo.Window(g[0], 2); mean != 4 {
		t.Errorf("redo from interval 2 = %v; want 2 MB in 0.5 s = 4 MB/s (interval 1's reading starts it)", mean)
	}
	vals, known := redo.PerInterval(g[0])
	if known[0] || known[3] || vals[1] != 2 || vals[2] != 4 {
		t.Errorf("redo per interval = %v %v; want unknown, 2, 4, unknown (restart)", vals, known)
	}
	lsn, _ := InnoDBMetricByKey("lsn_MB/s")
	if mean, _, _ := lsn.Window(g[0], 0); math.Abs(mean-4) > 1e-9 {
		t.Errorf("LSN advance = %v MB/s; want 4 MB in 1 s", mean)
	}
	dirty, _ := InnoDBMetricByKey("dirty")
	if mean, peak, _ := dirty.Window(g[0], 0); mean != 150 || peak != 300 {
		t.Errorf("dirty = %v (max %v); want mean 150, max 300", mean, peak)
	}
	// A run stored before the totals existed: the delta gauge per second.
	old := GaugesByWorker(gaugeIntervals(1, map[string]int64{"innodb.log_waits": 4}, map[string]int64{"innodb.log_waits": 6}))
	waits, _ := InnoDBMetricByKey("log_waits/s")
	if mean, _, ok := waits.Window(old[0], 0); !ok || mean != 5 {
		t.Errorf("log waits from delta gauges = %v, %v; want 5/s", mean, ok)
	}
	if v, ok := waits.Latest(map[string]int64{"innodb.log_waits": 7, "innodb.log_waits_total": 100}); !ok || v != 7 {
		t.Errorf("Latest = %v, %v; want the last sample's 7/s", v, ok)
	}
}
