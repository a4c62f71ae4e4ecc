package blockdev

import (
	"fmt"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// Filesystem is what a directory is stored on.
type Filesystem struct {
	Dir        string
	MountPoint string
	FSType     string // "xfs", "ext4"
	Source     string // "/dev/nvme0n1p2"
	// Options are the mount's and the superblock's options, merged
	// ("rw", "noatime", "discard", "logbsize=256k").
	Options []string
	// Device is the whole disk (or dm/md device) behind Dir, "" for
	// filesystems without one (tmpfs, NFS).
	Device string
}

// HasOption reports whether opt ("noatime") is among the options.
func (f Filesystem) HasOption(opt string) bool {
	for _, o := range f.Options {
		if o == opt {
			return true
		}
	}
	return false
}

// FilesystemOf describes the filesystem holding dir on the running system.
func FilesystemOf(dir string) (Filesystem, error) {
	return FilesystemWith(diskstats.DefaultResolver(), dir)
}

// FilesystemWith describes the filesystem holding dir, reading the mount
// table and sysfs through r.
func FilesystemWith(r diskstats.Resolver, dir string) (Filesystem, error) {
	m, err := r.MountOf(dir)
	if err != nil {
		return Filesystem{}, fmt.Errorf("filesystem of %s: %w", dir, err)
	}
	fs := Filesystem{Dir: dir, MountPoint: m.MountPoint, FSType: m.FSType, Source: m.Source, Options: m.AllOptions()}
	if devs, err := r.Paths(dir); err == nil && len(devs) == 1 {
		fs.Device = devs[0].Name
	}
	return fs, nil
}
