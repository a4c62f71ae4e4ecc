package advise

// Rule is one check. Check must be a pure function of the Facts: no I/O,
// same answer for the same Facts.
type Rule struct {
	ID    string
	Title string
	Check func(f *Facts) []Finding
}

// Thresholds the rules use, from the field's rules of thumb (FIELD.md).
const (
	// ioCapacityShare: innodb_io_capacity ~= 0.7 x the device's measured
	// random-write IOPS.
	ioCapacityShare = 0.7
	// cappedIOPS: a disk measuring below this many random-write IOPS is
	// treated as IOPS-capped (capacity-class cloud disks: 3,000-5,000).
	cappedIOPS = 10000
	// smallRedo: redo capacities at or below this are the shipped defaults
	// (MySQL 8.0.30+ 100 MiB; MariaDB 96 MiB; MySQL 5.7 2 x 48 MiB).
	smallRedo = 128 << 20
	// checkpointAgeLimit: above this share of the redo capacity flushing
	// cannot keep up (adaptive flushing turns aggressive, then sync flush).
	checkpointAgeLimit = 0.70
	// redoHours: the redo should hold about this many hours of writes.
	redoHours = 1
)

// Rules returns every rule, in report order.
func Rules() []Rule {
	return []Rule{
		{ID: "log-write-ahead-size", Title: "innodb_log_write_ahead_size below the physical block size", Check: checkWriteAhead},
		{ID: "flush-neighbors", Title: "innodb_flush_neighbors on a non-rotational device", Check: checkFlushNeighbors},
		{ID: "io-capacity", Title: "innodb_io_capacity far from the device's random-write IOPS", Check: checkIOCapacity},
		{ID: "doublewrite-same-device", Title: "doublewrite files on the data device", Check: checkDoublewrite},
		{ID: "redo-default", Title: "redo capacity at the default on a write-heavy server", Check: checkRedoDefault},
		{ID: "dedicated-server", Title: "innodb_dedicated_server on a shared or IOPS-capped disk", Check: checkDedicated},
		{ID: "nvme-scheduler", Title: "I/O scheduler not none on NVMe", Check: checkNVMeScheduler},
		{ID: "checkpoint-age", Title: "checkpoint age above 70% of the redo capacity", Check: checkCheckpointAge},
	}
}

// Check runs every rule on f.
func Check(f *Facts) []Finding {
	var out []Finding
	for _, r := range Rules() {
		out = append(out, r.Check(f)...)
	}
	return out
}
