package advise

import (
	"github.com/writepath/writepath/telemetry/blockdev"
	"github.com/writepath/writepath/telemetry/mysqlstatus"
)

// Facts is everything the rules look at.
type Facts struct {
	// Source says where the settings came from ("server root@tcp(...)/",
	// "option file /srv/db1/my.cnf").
	Source string
	Vars   mysqlstatus.Variables

	// DataDir is the server's datadir; Data, Redo and Doublewrite are the
	// disks behind the data files, innodb_log_group_home_dir and the
	// doublewrite files (a Disk with no Device when not on this host).
	DataDir                 string
	Data, Redo, Doublewrite Disk
	// SharedWith lists the other mounted filesystems on the data's disk,
	// "/" included when the data sits on the root filesystem.
	SharedWith []string

	// RedoBytesPerSec is the redo write rate (Innodb_os_log_written per
	// second, averaged since server start); 0 when unknown.
	RedoBytesPerSec float64
	// CheckpointAge is the highest checkpoint age seen (bytes), and
	// CheckpointAgeSource where ("during the last run", "sampled now").
	CheckpointAge       uint64
	CheckpointAgeSource string
	// WriteIOPS is the data disk's measured 4 KiB random-write IOPS (0 when
	// not measured), and WriteIOPSSource how it was measured.
	WriteIOPS       float64
	WriteIOPSSource string

	// Notes say what could not be gathered, and why.
	Notes []string
}

// Disk is the block device behind a directory.
type Disk struct {
	Dir    string
	Device string // whole disk or dm/md device; "" when unknown
	Info   blockdev.Info
	FS     blockdev.Filesystem
}

// Known reports whether the directory's device was found on this host.
func (d Disk) Known() bool { return d.Device != "" }

// MariaDB reports whether the settings are a MariaDB server's.
func (f *Facts) MariaDB() bool { return f.Vars.MariaDB() }

// disks returns the distinct known disks, data first.
func (f *Facts) disks() []Disk {
	var out []Disk
	for _, d := range []Disk{f.Data, f.Redo, f.Doublewrite} {
		dup := false
		for _, o := range out {
			dup = dup || o.Device == d.Device
		}
		if d.Known() && !dup {
			out = append(out, d)
		}
	}
	return out
}
