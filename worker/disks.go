package worker

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
)

// Disks applies a run's disk profile (RunSpec.disk) around each phase,
// kind-independent like telemetry; cmd/writepath adapts package
// diskprofile to it.
type Disks interface {
	// Check validates a profile against the operator's opt-in and the
	// kernel, changing nothing.
	Check(spec *writepathv1.DiskSpec) error
	// Prepare readies the profile's target (a loop filesystem is made and
	// mounted, and kept for later phases) without capping anything.
	Prepare(spec *writepathv1.DiskSpec) error
	// Apply puts the caps in force until the hold is restored.
	Apply(spec *writepathv1.DiskSpec) (DiskHold, error)
}

// DiskHold is one phase's caps in force.
type DiskHold interface {
	// Values are the credit balance and the cap in force, named
	// "disk.<metric>", for the interval's telemetry.
	Values() map[string]float64
	// Device is the kernel name of the device the profile is on ("loop3"),
	// sampled for iostat beside the credits; "" if unknown.
	Device() string
	// Restore removes the caps; safe to call more than once.
	Restore() error
}

// checkDisk refuses a profile this worker cannot apply.
func (c Config) checkDisk(spec *writepathv1.DiskSpec) error {
	if spec == nil {
		return nil
	}
	if c.Disks == nil {
		return fmt.Errorf("disk profile %s: %w", spec.GetName(), ErrNoDisks)
	}
	return c.Disks.Check(spec)
}

// withDisk adds a hold's values, and the iostat of its device when the
// worker's own telemetry does not sample it, to a phase's telemetry.
type withDisk struct {
	t    Telemetry // may be nil
	dev  Telemetry // the profile's device; may be nil
	hold DiskHold
}

// diskTelemetry wraps t for a phase under hold; the returned func
// releases the device sampler.
func diskTelemetry(t Telemetry, hold DiskHold, sampled []string) (Telemetry, func()) {
	w := withDisk{t: t, hold: hold}
	name := hold.Device()
	if name == "" || slices.Contains(sampled, name) {
		return w, func() {}
	}
	dt, err := NewDiskTelemetry(diskstats.DefaultPath, []string{name})
	if err != nil {
		return w, func() {}
	}
	pt, err := dt.Start()
	if err != nil {
		return w, func() {}
	}
	w.dev = pt
	return w, func() {
		if c, ok := pt.(io.Closer); ok {
			c.Close()
		}
	}
}

func (w withDisk) Sample(end time.Time) ([]DeviceStats, map[string]float64) {
	var devs []DeviceStats
	var values map[string]float64
	if w.t != nil {
		devs, values = w.t.Sample(end)
	}
	if w.dev != nil {
		extra, _ := w.dev.Sample(end)
		devs = append(slices.Clip(devs), extra...)
	}
	dv := w.hold.Values()
	if len(values) == 0 {
		return devs, dv
	}
	out := maps.Clone(values)
	maps.Copy(out, dv)
	return devs, out
}

// sampledDevices are the devices the worker's telemetry already samples.
func sampledDevices(t Telemetry) []string {
	if d, ok := t.(interface{ Devices() []string }); ok {
		return d.Devices()
	}
	return nil
}
