package advise

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// checkWriteAhead: redo written in units smaller than the physical block
// makes the device read the block, merge and write it back.
func checkWriteAhead(f *Facts) []Finding {
	wa, ok := f.Vars.Int("innodb_log_write_ahead_size")
	disk := f.Redo
	if !disk.Known() {
		disk = f.Data
	}
	phys := disk.Info.PhysicalBlockSize
	if !ok || !disk.Known() || phys == 0 || wa >= phys {
		return nil
	}
	return []Finding{{
		Rule: "log-write-ahead-size", Severity: Warn,
		Problem: fmt.Sprintf("innodb_log_write_ahead_size %d is below the %d-byte physical block size of %s, where the redo log is written", wa, phys, disk.Device),
		Evidence: []Evidence{ev("innodb_log_write_ahead_size", wa), ev(disk.Device+" physical_block_size", phys),
			ev(disk.Device+" logical_block_size", disk.Info.LogicalBlockSize), ev("redo directory", disk.Dir)},
		Suggest: fmt.Sprintf("innodb_log_write_ahead_size=%d", phys),
		Why:     "partial-block redo writes turn into read-modify-write on the device; published: 512 on a 4096-byte disk moved the block-layer read/write ratio from 0.02 to 0.97 and TPS from 3,120 to 2,410",
	}}
}

// checkFlushNeighbors: flushing a page's neighbours only pays on seek-bound
// spinning disks; on SSDs it writes pages that were not due.
func checkFlushNeighbors(f *Facts) []Finding {
	n, ok := f.Vars.Int("innodb_flush_neighbors")
	if !ok || n == 0 || !f.Data.Known() || f.Data.Info.Rotational {
		return nil
	}
	return []Finding{{
		Rule: "flush-neighbors", Severity: Warn,
		Problem:  fmt.Sprintf("innodb_flush_neighbors=%d on %s, which is not rotational", n, f.Data.Device),
		Evidence: []Evidence{ev("innodb_flush_neighbors", n), ev(f.Data.Device+" rotational", 0), ev("model", orUnknown(f.Data.Info.Model))},
		Suggest:  "innodb_flush_neighbors=0",
		Why:      "neighbour flushing groups writes for seeking disks; on flash it only adds writes (MySQL 8 defaults to 0, MariaDB to 1)",
	}}
}

// checkIOCapacity compares innodb_io_capacity with 0.7 x the measured
// random-write IOPS, or offers to measure.
func checkIOCapacity(f *Facts) []Finding {
	ioc, ok := f.Vars.Int("innodb_io_capacity")
	if !ok {
		return nil
	}
	if f.WriteIOPS <= 0 {
		return []Finding{{
			Rule: "io-capacity", Severity: Info,
			Problem:  fmt.Sprintf("innodb_io_capacity=%d cannot be checked: the device's random-write IOPS was not measured", ioc),
			Evidence: []Evidence{ev("innodb_io_capacity", ioc), ev("data device", orUnknown(f.Data.Device))},
			Suggest:  "run `writepath advise --measure` on the database host (a 4 KiB random-write, direct-IO fio-equivalent job in the datadir)",
			Why:      "the rule of thumb is innodb_io_capacity = 0.7 x the device's sustained random-write IOPS",
		}}
	}
	want := int64(math.Round(ioCapacityShare * f.WriteIOPS))
	evidence := []Evidence{ev("innodb_io_capacity", ioc), ev("measured random-write IOPS", fmt.Sprintf("%.0f (%s)", f.WriteIOPS, f.WriteIOPSSource))}
	switch {
	case float64(ioc) > f.WriteIOPS:
		return []Finding{{Rule: "io-capacity", Severity: Warn,
			Problem:  fmt.Sprintf("innodb_io_capacity=%d is above the %.0f random-write IOPS the device sustains", ioc, f.WriteIOPS),
			Evidence: evidence, Suggest: fmt.Sprintf("innodb_io_capacity=%d", want),
			Why: "background flushing then competes with foreground writes for IOPS the disk does not have; on burst-credit disks it runs fast until the credits are gone (published: 5,500 TPS for 40 s, then 2,100 with 1.2 s stalls)"}}
	case ioc*2 < want:
		return []Finding{{Rule: "io-capacity", Severity: Info,
			Problem:  fmt.Sprintf("innodb_io_capacity=%d is far below 0.7 x the measured %.0f IOPS", ioc, f.WriteIOPS),
			Evidence: evidence, Suggest: fmt.Sprintf("innodb_io_capacity=%d", want),
			Why: "too low a capacity lets dirty pages and checkpoint age pile up until InnoDB flushes synchronously"}}
	}
	return nil
}

// checkDoublewrite: doublewrite doubles page writes; on the same device
// they share its IOPS with the data files.
func checkDoublewrite(f *Facts) []Finding {
	dw, ok := f.Vars.Str("innodb_doublewrite")
	if !ok || isOff(dw) || !f.Data.Known() || !f.Doublewrite.Known() || f.Doublewrite.Device != f.Data.Device {
		return nil
	}
	suggest := "innodb_doublewrite_dir=<a directory on another device>"
	if f.MariaDB() {
		suggest = "innodb_data_home_dir=<a directory on another device> (MariaDB keeps the doublewrite buffer in the system tablespace)"
	}
	return []Finding{{
		Rule: "doublewrite-same-device", Severity: Warn,
		Problem: fmt.Sprintf("the doublewrite buffer (%s) and the data (%s) are both on %s", f.Doublewrite.Dir, f.Data.Dir, f.Data.Device),
		Evidence: []Evidence{ev("innodb_doublewrite", dw), ev("doublewrite directory", f.Doublewrite.Dir+" on "+f.Doublewrite.Device),
			ev("datadir", f.Data.Dir+" on "+f.Data.Device)},
		Suggest: suggest,
		Why:     "every flushed page is written twice; published on a 5,000-IOPS cloud disk: fsync+doublewrite 3,820 TPS, with the doublewrite files on a separate disk 6,930 TPS",
	}}
}

// checkDedicated: innodb_dedicated_server sizes memory and redo as if the
// host and its disk were the server's alone.
func checkDedicated(f *Facts) []Finding {
	on, ok := f.Vars.Bool("innodb_dedicated_server")
	capped := f.WriteIOPS > 0 && f.WriteIOPS < cappedIOPS
	if !ok || !on || (len(f.SharedWith) == 0 && !capped) {
		return nil
	}
	evidence := []Evidence{ev("innodb_dedicated_server", "ON")}
	var why []string
	if len(f.SharedWith) > 0 {
		evidence = append(evidence, ev(f.Data.Device+" also holds", strings.Join(f.SharedWith, ", ")))
		why = append(why, "the data disk is shared with other filesystems")
	}
	if capped {
		evidence = append(evidence, ev("measured random-write IOPS", fmt.Sprintf("%.0f", f.WriteIOPS)))
		why = append(why, fmt.Sprintf("the disk sustains only %.0f random-write IOPS", f.WriteIOPS))
	}
	return []Finding{{
		Rule: "dedicated-server", Severity: Warn,
		Problem:  "innodb_dedicated_server=ON but " + strings.Join(why, " and "),
		Evidence: evidence,
		Suggest:  "innodb_dedicated_server=OFF, with innodb_buffer_pool_size, innodb_redo_log_capacity and innodb_flush_method set explicitly",
		Why:      "it takes ~75% of RAM for the buffer pool, sizes the redo log from RAM and picks O_DIRECT_NO_FSYNC, assuming nothing else uses the host or its disk",
	}}
}

// checkNVMeScheduler: NVMe queues are deep and parallel; a scheduler adds
// CPU and latency without reordering benefit.
func checkNVMeScheduler(f *Facts) []Finding {
	var out []Finding
	for _, d := range f.disks() {
		i := d.Info
		if !i.NVMe() || i.Scheduler == "none" || i.Scheduler == "" || !slices.Contains(i.Schedulers, "none") {
			continue
		}
		out = append(out, Finding{
			Rule: "nvme-scheduler", Severity: Warn,
			Problem:  fmt.Sprintf("%s is NVMe but uses the %s scheduler", i.Disk, i.Scheduler),
			Evidence: []Evidence{ev(i.Disk+" scheduler", i.Scheduler), ev("choices", strings.Join(i.Schedulers, " ")), ev("nr_requests", i.NrRequests)},
			Suggest: fmt.Sprintf("scheduler none on %s: measure it first with the campaign below (host.scheduler, set and restored by each run), "+
				"then keep it with a udev rule: ACTION==\"add|change\", KERNEL==\"%s\", ATTR{queue/scheduler}=\"none\"", i.Disk, i.Disk),
			Why:      "NVMe devices schedule internally across deep parallel queues; the field runs them with scheduler none",
			Campaign: schedulerCampaign(d),
		})
	}
	return out
}

// isOff reports whether an ON/OFF style value is off.
func isOff(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "OFF", "0", "FALSE", "NO":
		return true
	}
	return false
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
