// Package blockdev probes what the field checks first on a database host:
// the block device's queue settings (logical and physical block size, I/O
// scheduler and its choices, nr_requests, rotational, write cache,
// nomerges), its model, and the filesystem type and mount options of the
// data directory.
//
// Everything comes from sysfs (/sys/class/block/<dev>, and its queue/ and
// device/ directories) and the mount table; nothing is written. A partition
// is probed through its disk, which owns the request queue. The worker may
// import this package; it must not import database/sql.
package blockdev
