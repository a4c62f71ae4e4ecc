package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/hostknob"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
)

// disks is a worker's disk-profile manager; it writes the restore journal
// of the host knobs' Host (one journal per data directory).
type disks struct {
	m *diskprofile.Manager
}

var _ worker.Disks = (*disks)(nil)

// openHostChanges opens a worker's host knobs and disk profiles on one
// restore journal in dataDir: the Host's, with the profiles' restorers,
// which restores what a killed worker left changed before anything else.
// With nothing allowed it is opened only when a journal is there; a run
// with knobs or a profile is then refused by the worker.
func openHostChanges(dataDir string, allowHost hostknob.Allow, allowDisk diskprofile.Allow, flag string, log *slog.Logger) (*hostknob.Host, *disks, error) {
	if allowHost.Empty() && allowDisk.Empty() {
		if _, err := os.Stat(filepath.Join(dataDir, hostknob.JournalName)); err != nil {
			return nil, nil, nil
		}
	} else if uid := os.Geteuid(); uid != 0 {
		return nil, nil, fmt.Errorf("%s: host knobs and disk profiles change sysfs, cgroups, loop devices and mounts, which needs root (running as uid %d)", flag, uid)
	}
	h, err := hostknob.Open(hostknob.Config{Dir: dataDir, Allow: allowHost, Log: log,
		Restorers: diskprofile.Restorers(dataDir, "", "")})
	if h == nil {
		return nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	if err != nil {
		if !allowDisk.Empty() {
			h.Close()
			return nil, nil, fmt.Errorf("%s: %w", flag, err)
		}
		log.Error("host knobs refused until a restart restores them", "err", err) // load without knobs still runs
	}
	if allowDisk.Empty() {
		return h, nil, nil
	}
	m, err := diskprofile.New(diskprofile.Config{DataDir: dataDir, Journal: h.Journal(), Allow: allowDisk, Log: log})
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	return h, &disks{m: m}, nil
}

// closeDisks restores every cap still in force and unmounts the loop
// filesystems (what fails stays journaled for the next start).
func closeDisks(d *disks, stderr io.Writer) {
	if d == nil {
		return
	}
	if err := d.m.Close(); err != nil {
		fmt.Fprintf(stderr, "disk profile: %v\n", err)
	}
}

// workerDisks is d as worker.Config.Disks (nil stays a nil interface).
func (d *disks) workerDisks() worker.Disks {
	if d == nil {
		return nil
	}
	return d
}

func (d *disks) Check(spec *writepathv1.DiskSpec) error {
	s, err := diskprofile.FromProto(spec)
	if err != nil {
		return err
	}
	return d.m.Check(s)
}

func (d *disks) Prepare(spec *writepathv1.DiskSpec) error {
	s, err := diskprofile.FromProto(spec)
	if err != nil {
		return err
	}
	return d.m.Prepare(s)
}

func (d *disks) Apply(spec *writepathv1.DiskSpec) (worker.DiskHold, error) {
	s, err := diskprofile.FromProto(spec)
	if err != nil {
		return nil, err
	}
	return d.m.Apply(s)
}

// diskSpec parses a --disk value (or a campaign cell's disk) into what a
// RunSpec carries; "" and "none" mean no profile.
func diskSpec(v string) (*writepathv1.DiskSpec, error) {
	if v == "" || v == "none" {
		return nil, nil
	}
	s, err := diskprofile.ParseSpec(v)
	if err != nil {
		return nil, err
	}
	return diskprofile.ToProto(s.WithDefaults()), nil
}

// newDiskCmd is `writepath disk profiles`: the built-in profiles, their
// figures and where they come from.
func newDiskCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "disk", Short: "Cloud-disk profiles (run --disk, crash --disk, campaign disk:)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "profiles",
		Short: "List the built-in disk profiles with their figures and sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeProfiles(cmd.OutOrStdout())
		},
	})
	return cmd
}

func writeProfiles(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tbaseline IOPS\tbaseline MB/s\tburst IOPS\tburst MB/s\tbucket\tburst s\tsource")
	for _, p := range diskprofile.Builtins() {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%.0f\t%d\t%.0f\t%s\n", p.Name, p.BaselineIOPS, float64(p.BaselineBPS)/1e6,
			max(p.BurstIOPS, p.BaselineIOPS), float64(max(p.BurstBPS, p.BaselineBPS))/1e6, p.Bucket, p.BurstSeconds(), p.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "\ncustom or any built-in, with overrides: baseline_iops=N,baseline_mbps=N,burst_iops=N,burst_mbps=N,\n"+
		"  bucket=N (I/O credits),refill=N (credits/s; default baseline_iops),credits=N (every phase starts at N) (0: uncapped)\n"+
		"where: dir=disk,fs=ext4|xfs,size=4G,mount=noatime+nodiratime (a loop filesystem in the data dir), or device=/dev/sdb\n")
	return err
}
