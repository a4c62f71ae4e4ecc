package diskstats

import "errors"

var (
	// ErrFormat is returned for a line that is not a /proc/diskstats line.
	ErrFormat = errors.New("not a diskstats line")
	// ErrNoDevice is returned when a requested device is missing from
	// /proc/diskstats or /sys.
	ErrNoDevice = errors.New("no such block device")
	// ErrNoBlockDevice is returned for a path whose filesystem has no block
	// device behind it (tmpfs, overlay, NFS, ...).
	ErrNoBlockDevice = errors.New("filesystem has no block device")
)
