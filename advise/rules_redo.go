package advise

import "fmt"

// checkRedoDefault: a small redo log on a server that writes a lot forces
// frequent checkpoints and furious flushing.
func checkRedoDefault(f *Facts) []Finding {
	capBytes, source, ok := f.Vars.RedoCapacity()
	if !ok || capBytes > smallRedo || f.RedoBytesPerSec <= 0 {
		return nil
	}
	perHour := f.RedoBytesPerSec * 3600 * redoHours
	if perHour <= float64(capBytes) {
		return nil
	}
	return []Finding{{
		Rule: "redo-default", Severity: Warn,
		Problem: fmt.Sprintf("the redo log holds %s (%s) but the server writes %s of redo per hour", mib(float64(capBytes)), source, mib(perHour)),
		Evidence: []Evidence{ev(source, capBytes), ev("redo write rate", fmt.Sprintf("%.3g MiB/s (Innodb_os_log_written, since start)", f.RedoBytesPerSec/(1<<20))),
			ev("redo per hour", mib(perHour))},
		Suggest: redoSetting(f, perHour),
		Why:     "the redo log should hold about an hour of writes; a default-size log makes InnoDB checkpoint constantly and flush dirty pages in bursts",
	}}
}

// checkCheckpointAge: above ~70% of capacity InnoDB's flushing is not
// keeping up, and writers will soon stall on a sync flush.
func checkCheckpointAge(f *Facts) []Finding {
	capBytes, source, ok := f.Vars.RedoCapacity()
	if !ok || capBytes <= 0 || f.CheckpointAge == 0 {
		return nil
	}
	share := float64(f.CheckpointAge) / float64(capBytes)
	if share <= checkpointAgeLimit {
		return nil
	}
	ioc, _ := f.Vars.Int("innodb_io_capacity")
	return []Finding{{
		Rule: "checkpoint-age", Severity: Warn,
		Problem: fmt.Sprintf("checkpoint age reached %.0f%% of the redo capacity (%s)", share*100, f.CheckpointAgeSource),
		Evidence: []Evidence{ev("checkpoint age", fmt.Sprintf("%d bytes (%s)", f.CheckpointAge, mib(float64(f.CheckpointAge)))),
			ev(source, fmt.Sprintf("%d bytes (%s)", capBytes, mib(float64(capBytes)))), ev("innodb_io_capacity", ioc)},
		// Sized so that the same age would be half the log.
		Suggest: redoSetting(f, 2*float64(f.CheckpointAge)) + ", or raise innodb_io_capacity if the device has IOPS to spare",
		Why:     "above ~70% InnoDB flushes aggressively and near the limit it blocks writers until pages are flushed: flushing cannot keep up",
	}}
}

// redoSetting names the option that sets a redo capacity of at least bytes
// on this server.
func redoSetting(f *Facts, bytes float64) string {
	if _, ok := f.Vars.Str("innodb_redo_log_capacity"); ok {
		return "innodb_redo_log_capacity=" + optionSize(bytes)
	}
	if files, ok := f.Vars.Int("innodb_log_files_in_group"); ok && files > 1 {
		return fmt.Sprintf("innodb_log_file_size=%s (x %d files)", optionSize(bytes/float64(files)), files)
	}
	return "innodb_log_file_size=" + optionSize(bytes)
}
