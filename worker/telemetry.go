package worker

import (
	"io"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
)

// Telemetry samples the host once per interval. Implementations adapt
// telemetry/diskstats and similar sources; they must return within a small
// fraction of the interval.
type Telemetry interface {
	// Sample returns the block devices' counter increases and any other
	// values (named "<source>.<metric>") over the interval ending at end.
	Sample(end time.Time) ([]DeviceStats, map[string]float64)
}

// TelemetryStarter is a Telemetry that keeps a baseline between samples.
// The worker calls Start when a measured phase starts and samples what it
// returns for that phase only, so the first interval covers the phase and
// not the idle time before it, and phases running at once (in-process
// workers sharing one Config) never share a baseline. If the result is an
// io.Closer the worker closes it when the phase ends.
type TelemetryStarter interface {
	Telemetry
	Start() (Telemetry, error)
}

// TelemetryFunc adapts a function to Telemetry.
type TelemetryFunc func(end time.Time) ([]DeviceStats, map[string]float64)

// Sample calls f.
func (f TelemetryFunc) Sample(end time.Time) ([]DeviceStats, map[string]float64) { return f(end) }

// DeviceStats is one block device's raw counter increase over an exact
// sample window; every iostat -x column follows from it (Delta.Stats).
type DeviceStats struct {
	Device string
	Window time.Duration
	Delta  diskstats.Delta
}

// phaseTelemetry returns what to sample during one phase and a func that
// releases it. A starter that fails is logged and the phase runs without
// telemetry: a missing device must not stop a load test.
func (s *session) phaseTelemetry() (Telemetry, func()) {
	t := s.w.cfg.Telemetry
	st, ok := t.(TelemetryStarter)
	if !ok {
		return t, func() {}
	}
	pt, err := st.Start()
	if err != nil {
		s.w.cfg.Log.Warn("telemetry", "err", err)
		return nil, func() {}
	}
	return pt, func() {
		if c, ok := pt.(io.Closer); ok {
			c.Close()
		}
	}
}

func telemetryProto(t Telemetry, end time.Time) *writepathv1.Telemetry {
	if t == nil {
		return nil
	}
	devs, values := t.Sample(end)
	if len(devs) == 0 && len(values) == 0 {
		return nil
	}
	out := &writepathv1.Telemetry{Values: values, Devices: make([]*writepathv1.DeviceStats, 0, len(devs))}
	for i := range devs {
		out.Devices = append(out.Devices, DeviceProto(devs[i].Device, devs[i].Window, &devs[i].Delta))
	}
	return out
}

// DeviceProto is one device's interval as sent: every iostat -x column,
// and the raw delta with its window so that windows sum exactly.
func DeviceProto(device string, window time.Duration, d *diskstats.Delta) *writepathv1.DeviceStats {
	s := d.Stats(window)
	return &writepathv1.DeviceStats{
		Device: device, ReadsPerSec: s.ReadsPerSec, WritesPerSec: s.WritesPerSec,
		ReadKibPerSec: s.ReadKBPerSec, WriteKibPerSec: s.WriteKBPerSec,
		ReadAwaitMs: s.ReadAwaitMs, WriteAwaitMs: s.WriteAwaitMs,
		AvgQueueSize: s.QueueSize, UtilPercent: s.UtilPct,
		FlushesPerSec: s.FlushesPerSec, FlushAwaitMs: s.FlushAwaitMs,
		ReadMergesPerSec: s.ReadMergesPerSec, WriteMergesPerSec: s.WriteMergesPerSec,
		ReadMergePercent: s.ReadMergePct, WriteMergePercent: s.WriteMergePct,
		ReadReqKib: s.ReadReqKB, WriteReqKib: s.WriteReqKB,
		DiscardsPerSec: s.DiscardsPerSec, DiscardKibPerSec: s.DiscardKBPerSec, DiscardAwaitMs: s.DiscardAwaitMs,
		CountersReset: d.Reset, Delta: DeltaProto(d), IntervalNs: window.Nanoseconds(),
	}
}

// DeltaProto converts a raw counter increase.
func DeltaProto(d *diskstats.Delta) *writepathv1.DiskDelta {
	return &writepathv1.DiskDelta{
		ReadIos: d.ReadIOs, ReadMerges: d.ReadMerges, ReadSectors: d.ReadSectors, ReadTicks: d.ReadTicks,
		WriteIos: d.WriteIOs, WriteMerges: d.WriteMerges, WriteSectors: d.WriteSectors, WriteTicks: d.WriteTicks,
		DiscardIos: d.DiscardIOs, DiscardMerges: d.DiscardMerges, DiscardSectors: d.DiscardSectors, DiscardTicks: d.DiscardTicks,
		FlushIos: d.FlushIOs, FlushTicks: d.FlushTicks, IoTicks: d.IOTicks, TimeInQueue: d.TimeInQueue,
		InFlight: d.InFlight, Fields: uint32(d.Fields),
	}
}
