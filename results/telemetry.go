package results

import (
	"slices"
	"strings"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
)

// DeviceWindow is one worker's device over a phase: the raw counter deltas
// and windows summed (so Mean is exactly what `iostat -x` prints for the
// whole phase, never a mean of rates) and the highest figures of any one
// interval, column by column.
type DeviceWindow struct {
	Worker, Device string
	Intervals      int
	Sum            diskstats.Delta
	Window         time.Duration
	Max            diskstats.Stats
}

// Mean is the device's iostat -x figures over the whole window.
func (w *DeviceWindow) Mean() diskstats.Stats { return w.Sum.Stats(w.Window) }

// GaugeWindow is one worker's gauge over a phase, from its values at the
// interval ends.
type GaugeWindow struct {
	Worker, Gauge string
	Intervals     int
	Sum           float64 // of the values, in interval order
	Max           int64
}

// Mean is the mean of the gauge's values.
func (g *GaugeWindow) Mean() float64 { return g.Sum / float64(g.Intervals) }

// DeviceDelta returns a stored device's raw counter increase and window.
func DeviceDelta(d *writepathv1.DeviceStats) (diskstats.Delta, time.Duration) {
	p := d.GetDelta()
	return diskstats.Delta{
		ReadIOs: p.GetReadIos(), ReadMerges: p.GetReadMerges(), ReadSectors: p.GetReadSectors(), ReadTicks: p.GetReadTicks(),
		WriteIOs: p.GetWriteIos(), WriteMerges: p.GetWriteMerges(), WriteSectors: p.GetWriteSectors(), WriteTicks: p.GetWriteTicks(),
		DiscardIOs: p.GetDiscardIos(), DiscardMerges: p.GetDiscardMerges(), DiscardSectors: p.GetDiscardSectors(),
		DiscardTicks: p.GetDiscardTicks(), FlushIOs: p.GetFlushIos(), FlushTicks: p.GetFlushTicks(),
		IOTicks: p.GetIoTicks(), TimeInQueue: p.GetTimeInQueue(), InFlight: p.GetInFlight(), Fields: int(p.GetFields()),
		Reset: d.GetCountersReset(),
	}, time.Duration(d.GetIntervalNs())
}

// DeviceFigures returns a stored device's iostat -x figures over its
// interval, from the raw delta (the one formula for lines, summaries and
// reports).
func DeviceFigures(d *writepathv1.DeviceStats) diskstats.Stats {
	delta, window := DeviceDelta(d)
	return delta.Stats(window)
}

// addTelemetry adds one worker's telemetry of one merged interval.
func (p *Phase) addTelemetry(wt *writepathv1.WorkerTelemetry) {
	for _, d := range wt.GetTelemetry().GetDevices() {
		k := [2]string{wt.GetWorker(), d.GetDevice()}
		w := p.devices[k]
		if w == nil {
			w = &DeviceWindow{Worker: k[0], Device: k[1]}
			p.devices[k] = w
		}
		delta, window := DeviceDelta(d)
		w.Sum.Add(delta)
		w.Window += window
		w.Intervals++
		w.Max = maxStats(w.Max, delta.Stats(window))
	}
	for name, v := range wt.GetGauges() {
		k := [2]string{wt.GetWorker(), name}
		g := p.gauges[k]
		if g == nil {
			g = &GaugeWindow{Worker: k[0], Gauge: k[1], Max: v}
			p.gauges[k] = g
		}
		g.Intervals++
		g.Sum += float64(v)
		g.Max = max(g.Max, v)
	}
}

// sortTelemetry lists the windows in worker, then name, order.
func (p *Phase) sortTelemetry() {
	p.Devices = sortedWindows(p.devices)
	p.Gauges = sortedWindows(p.gauges)
}

func sortedWindows[W any](m map[[2]string]*W) []*W {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	out := make([]*W, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// maxStats is the field-wise maximum of two sets of figures.
func maxStats(a, b diskstats.Stats) diskstats.Stats {
	return diskstats.Stats{
		ReadsPerSec: max(a.ReadsPerSec, b.ReadsPerSec), ReadKBPerSec: max(a.ReadKBPerSec, b.ReadKBPerSec),
		ReadMergesPerSec: max(a.ReadMergesPerSec, b.ReadMergesPerSec), ReadMergePct: max(a.ReadMergePct, b.ReadMergePct),
		ReadAwaitMs: max(a.ReadAwaitMs, b.ReadAwaitMs), ReadReqKB: max(a.ReadReqKB, b.ReadReqKB),
		WritesPerSec: max(a.WritesPerSec, b.WritesPerSec), WriteKBPerSec: max(a.WriteKBPerSec, b.WriteKBPerSec),
		WriteMergesPerSec: max(a.WriteMergesPerSec, b.WriteMergesPerSec), WriteMergePct: max(a.WriteMergePct, b.WriteMergePct),
		WriteAwaitMs: max(a.WriteAwaitMs, b.WriteAwaitMs), WriteReqKB: max(a.WriteReqKB, b.WriteReqKB),
		DiscardsPerSec: max(a.DiscardsPerSec, b.DiscardsPerSec), DiscardKBPerSec: max(a.DiscardKBPerSec, b.DiscardKBPerSec),
		DiscardMergesPerSec: max(a.DiscardMergesPerSec, b.DiscardMergesPerSec), DiscardMergePct: max(a.DiscardMergePct, b.DiscardMergePct),
		DiscardAwaitMs: max(a.DiscardAwaitMs, b.DiscardAwaitMs), DiscardReqKB: max(a.DiscardReqKB, b.DiscardReqKB),
		FlushesPerSec: max(a.FlushesPerSec, b.FlushesPerSec), FlushAwaitMs: max(a.FlushAwaitMs, b.FlushAwaitMs),
		QueueSize: max(a.QueueSize, b.QueueSize), UtilPct: max(a.UtilPct, b.UtilPct),
		HasDiscards: a.HasDiscards || b.HasDiscards, HasFlushes: a.HasFlushes || b.HasFlushes,
	}
}
