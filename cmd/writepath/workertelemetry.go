package main

import (
	"fmt"
	"io"
	"os"

	"github.com/writepath/writepath/telemetry/diskstats"
	"github.com/writepath/writepath/worker"
)

// workerTelemetry is what a worker samples beside each interval: the
// iostat -x figures of the disks behind dirs (through the mount table,
// partitions to their disk, dm/md devices with the disks under them) and of
// the devices named in devices. What does not resolve is skipped with a
// warning on warn; with nothing left it returns nil (no telemetry): a
// container without a block device must still run load.
func workerTelemetry(dirs, devices []string, warn io.Writer) worker.Telemetry {
	names, errs := resolveDevices(diskstats.DefaultResolver(), dirs, devices)
	for _, err := range errs {
		fmt.Fprintf(warn, "telemetry: %v\n", err)
	}
	if len(names) == 0 {
		return nil
	}
	t, err := worker.NewDiskTelemetry(diskstats.DefaultPath, names)
	if err != nil {
		fmt.Fprintf(warn, "telemetry: %v (intervals carry no device stats)\n", err)
		return nil
	}
	return t
}

// resolveDevices returns the /proc/diskstats names behind dirs and
// devices, each resolved on its own so one bad path loses only itself.
func resolveDevices(r diskstats.Resolver, dirs, devices []string) ([]string, []error) {
	var devs []diskstats.Device
	var errs []error
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			continue // not created yet (a job's directory): its disk is the data dir's
		}
		got, err := r.Paths(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("devices behind %s: %w", d, err))
		}
		devs = append(devs, got...)
	}
	for _, n := range devices {
		got, err := r.Names(n)
		if err != nil {
			errs = append(errs, fmt.Errorf("--devices %s: %w", n, err))
		}
		devs = append(devs, got...)
	}
	return diskstats.DeviceNames(devs, true), errs
}
