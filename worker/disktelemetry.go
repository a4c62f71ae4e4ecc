package worker

import (
	"fmt"
	"time"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// DiskTelemetry samples /proc/diskstats for a fixed set of devices: the
// iostat -x figures of each interval, with the raw deltas. It is a
// TelemetryStarter: each phase gets its own sampler whose baseline is the
// phase start.
type DiskTelemetry struct {
	path    string   // diskstats.DefaultPath outside tests
	devices []string // /proc/diskstats names
}

var _ TelemetryStarter = (*DiskTelemetry)(nil)

// NewDiskTelemetry samples devices (their /proc/diskstats names, e.g. from
// diskstats.DeviceNames) from path. It checks that path lists them.
func NewDiskTelemetry(path string, devices []string) (*DiskTelemetry, error) {
	s, err := diskstats.NewSampler(path, devices)
	if err != nil {
		return nil, fmt.Errorf("disk telemetry: %w", err)
	}
	t := &DiskTelemetry{path: path, devices: s.Devices()}
	return t, s.Close()
}

// Devices returns the sampled device names.
func (t *DiskTelemetry) Devices() []string { return append([]string(nil), t.devices...) }

// Start opens a sampler for one phase; its first reading is the baseline.
func (t *DiskTelemetry) Start() (Telemetry, error) {
	s, err := diskstats.NewSampler(t.path, t.devices)
	if err != nil {
		return nil, fmt.Errorf("disk telemetry: %w", err)
	}
	return &diskPhase{s: s, ivs: make([]diskstats.Interval, 0, len(t.devices)),
		out: make([]DeviceStats, 0, len(t.devices))}, nil
}

// Sample without Start reports nothing: there is no baseline to count from.
func (t *DiskTelemetry) Sample(time.Time) ([]DeviceStats, map[string]float64) { return nil, nil }

// diskPhase is one phase's sampler. Only the phase's interval goroutine
// calls it, so it needs no lock; its buffers are reused, so a Sample does
// not allocate (the returned slice is valid until the next Sample).
type diskPhase struct {
	s   *diskstats.Sampler
	ivs []diskstats.Interval
	out []DeviceStats
}

// Sample returns each device's increase since the previous sample. A
// failed read (a device removed mid-run) yields no devices for that
// interval rather than failing the phase.
func (p *diskPhase) Sample(time.Time) ([]DeviceStats, map[string]float64) {
	ivs, err := p.s.Sample(p.ivs[:0])
	p.ivs = ivs
	if err != nil {
		return nil, nil
	}
	p.out = p.out[:0]
	for _, iv := range p.ivs {
		p.out = append(p.out, DeviceStats{Device: iv.Device, Window: iv.End.Sub(iv.Start), Delta: iv.Delta})
	}
	return p.out, nil
}

// Close releases the sampler's file.
func (p *diskPhase) Close() error { return p.s.Close() }
