package fio

import (
	"errors"
	"fmt"
	"strings"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// What fio 3.33 accepts but writepath cannot run is accepted by the parser
// and refused when the job is to run: `fio --parse-only` (and so people's
// scripts that check job files with it) accepts fio's whole option set and
// every engine's options, while running a job with an option writepath
// does not honour would measure something else than fio does. So the
// option is recorded on the job (Job.refusals, with where it was given
// and why), --parse-only succeeds, and ParseArgs and New refuse the job
// with one line per refusal.

// runRefusal is what an option's apply returns for a value fio accepts and
// this job cannot run with; applySetting records it instead of failing.
type runRefusal string

func (r runRefusal) Error() string { return string(r) }

// fioOnly are fio 3.33's job options (aliases included) that are not in
// the option table: accepted, refused at run time with reasonFor's reason.
var fioOnly = setOf(`allow_file_create allow_mounted_write allrandrepeat atomic block_error_percentiles
	blocksize_unaligned bs_is_seq_rand bs_unaligned bwavgtime cgroup cgroup_nodelete
	cgroup_weight clocksource create_fsync
	create_only create_serialize dedupe_global dedupe_mode dedupe_percentage dedupe_working_set_percentage
	disk_util error_dump exec_postrun exec_prerun exitall_on_error fadvise_hint file_append
	flow_watermark gid gpu_dev_id gtod_cpu
	hugepage-size ignore_zone_limits iomem iomem_align iopsavgtime ioscheduler
	job_max_open_zones kb_base lockfile
	lockmem log_alternate_epoch log_alternate_epoch_clock_id log_compression_cpus
	log_entries max_open_zones mem mem_align merge_blktrace_file
	merge_blktrace_iters merge_blktrace_scalars nice numa_cpu_nodes numa_mem_policy offset_align opendir
	percentage_random percentage_sequential pre_read profile rate_cycle rate_ignore_thinktime
	ratecycle read_beyond_wp read_iolog_chunked replay_align
	replay_scale replay_skip rw_sequencer rwmixcycle significant_figures softrandommap
	ss ss_dur ss_ramp stats steadystate steadystate_duration steadystate_ramp_time sync_file_range
	thinktime_blocks_type thinktime_iotime trim_backlog trim_backlog_batch trim_percentage
	trim_verify_zero uid unique_filename unit_base verify_async verify_async_cpus
	verify_backlog_batch verify_offset verify_only verify_state_load verify_state_save
	verifysort verifysort_nr write_barrier write_hint zone_reset_frequency zone_reset_threshold
	zonecapacity`)

// engineOptions are the engine-specific options of fio 3.33's engines as
// Debian builds it (`fio --enghelp=ENGINE`). As in fio, a name that is no
// general option is looked up among the options of the section's engine;
// an engine fio here cannot load has none (fio: "failed to load engine").
var engineOptions = map[string]map[string]bool{
	"cpuio":        setOf("cpuload cpuchunks cpumode exit_on_io_done"),
	"mmap":         setOf("thp"),
	"pvsync2":      setOf("hipri hipri_percentage uncached nowait"),
	"net":          setOf("hostname port protocol nodelay listen pingpong interface ttl window_size mss"),
	"netsplice":    setOf("hostname port protocol nodelay listen pingpong interface ttl window_size mss"),
	"filestat":     setOf("stat_type"),
	"exec":         setOf("program arguments grace_time std_redirect"),
	"e4defrag":     setOf("donorname inplace"),
	"gfapi":        setOf("volume brick single-instance"),
	"gfapi_async":  setOf("volume brick single-instance"),
	"mtd":          setOf("skip_bad"),
	"sg":           setOf("hipri readfua writefua sg_write_mode stream_id"),
	"io_uring":     setOf(uringOptions),
	"io_uring_cmd": setOf(uringOptions),
	"nbd":          setOf("uri"),
	"libaio":       setOf("userspace_reap cmdprio_percentage cmdprio_class cmdprio cmdprio_bssplit nowait"),
	"rdma":         setOf("hostname bindname port verb"),
	"rados":        setOf("clustername pool clientname conf busy_poll touch_objects"),
	"rbd":          setOf("clustername rbdname pool clientname busy_poll"),
}

// engineOptionValues check the engine options whose values fio 3.33
// parses as numbers or from a fixed list (fio refuses a job file with
// "port=[port]" even under --parse-only).
var engineOptionValues = map[string]func(string) error{
	"port":     func(v string) error { _, err := parseUint(v, 1, 65535); return err },
	"verb":     oneOf("write", "read", "send", "recv"),
	"protocol": oneOf("tcp", "tcpv6", "udp", "udpv6", "unix"),
}

func oneOf(vals ...string) func(string) error {
	return func(v string) error {
		for _, w := range vals {
			if strings.TrimSpace(v) == w {
				return nil
			}
		}
		return fmt.Errorf("%q: want %s", v, strings.Join(vals, ", "))
	}
}

const uringOptions = "hipri cmdprio_percentage cmdprio_class cmdprio cmdprio_bssplit fixedbufs registerfiles " +
	"sqthread_poll sqthread_poll_cpu nonvectored uncached nowait force_async cmd_type"

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// reasonFor says why a fio option not in the table cannot run here.
func reasonFor(name string) string {
	if why, ok := refused[name]; ok {
		return why
	}
	switch {
	case strings.HasPrefix(name, "zone") || strings.Contains(name, "open_zones") || name == "read_beyond_wp" || name == "ignore_zone_limits":
		return refused["zonemode"]
	case strings.HasPrefix(name, "dedupe"):
		return refused["dedupe_percentage"]
	case strings.HasPrefix(name, "ss") || strings.HasPrefix(name, "steadystate"):
		return refused["steadystate"]
	case strings.HasPrefix(name, "replay_") || strings.HasPrefix(name, "read_iolog") || strings.HasPrefix(name, "merge_blktrace"):
		return "replay is built for fio's version 2 and 3 I/O logs of one file (read_iolog, replay_no_stall, replay_time_scale, replay_redirect); chunked reading, alignment, offset scaling, skipping and blktrace merges are not"
	case strings.HasPrefix(name, "numa_"):
		return refused["numa_cpu_nodes"]
	case strings.HasPrefix(name, "cgroup"):
		return refused["cgroup"]
	case name == "error_dump":
		return "error_dump (logging the errors continue_on_error lets pass) is not built; errors that stop a job are reported"
	}
	return "not built in writepath yet"
}

// engineName is the job's engine as fio names it.
func engineName(j *fiov1.Job) string {
	for _, r := range j.Refusals {
		if r.Option == "ioengine" {
			return strings.TrimSpace(r.Value)
		}
	}
	for n, e := range engineNames {
		if e == j.Ioengine {
			return n
		}
	}
	return ""
}

// refuse records that j cannot run with option=value given at where; a
// refusal of the same option given earlier (a global's) is replaced.
func refuse(j *fiov1.Job, option, value, where, why string) {
	dropRefusal(j, option)
	j.Refusals = append(j.Refusals, &fiov1.Refusal{Option: option, Value: value, Where: where, Why: why})
}

// dropRefusal forgets option's refusal: it was set again to a value the
// job can run with.
func dropRefusal(j *fiov1.Job, option string) {
	out := j.Refusals[:0]
	for _, r := range j.Refusals {
		if r.Option != option {
			out = append(out, r)
		}
	}
	j.Refusals = out
}

// refusalErrors are the reasons the jobs cannot run, one error apiece (a
// global's refusal once, not once per job).
func refusalErrors(jobs []*fiov1.Job) []error {
	var errs []error
	seen := map[string]bool{}
	for _, j := range jobs {
		for _, r := range j.Refusals {
			opt := r.Option
			if r.Value != "" {
				opt += "=" + r.Value
			}
			err := fmt.Errorf("%s: option %s: %w: %s (accepted by --parse-only, as fio; writepath cannot run it)", r.Where, opt, ErrUnsupported, r.Why)
			if !seen[err.Error()] {
				seen[err.Error()] = true
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// checkRunnable is nil when the jobs can run: none carries a refusal, and
// none breaks what fio checks in fixup_options. A job without size= is
// runnable: as fio's setup_files, it takes the size of its files if they
// exist (sizeNeeded when they do not), which is known where it runs.
func checkRunnable(jobs []*fiov1.Job) error {
	return errors.Join(runErrors(jobs)...)
}

func runErrors(jobs []*fiov1.Job) []error {
	errs := refusalErrors(jobs)
	for _, j := range jobs {
		if j.FillDevice && (readsData(j) || j.Overwrite) {
			errs = append(errs, fmt.Errorf("%s: job %s: option fill_device: %w: with reads or overwrite=1 fio lays the file out until the space ends and then runs on it; that is not built (fill_device runs write-only jobs)", j.Origin, j.Name, ErrUnsupported))
		}
		if j.FillDevice && j.Size == 0 && j.SizePercent == 0 && isRandomRW(j.Rw) {
			errs = append(errs, fmt.Errorf("%s: job %s: option fill_device: %w: random writes until the space ends without size= (fio 3.33 fails to allocate its random map for the unbounded size and does no I/O); give size=, or write sequentially", j.Origin, j.Name, ErrUnsupported))
		}
		// fio's fixup_options, whose errors its --parse-only does not
		// report
		switch {
		case j.ZoneMode == zoneNone && j.ZoneSize > 0:
			errs = append(errs, fmt.Errorf("%s: job %s: %w: --zonemode=none and --zonesize are not compatible (fio; zonemode defaults to none)", j.Origin, j.Name, ErrInvalidValue))
		case j.ZoneMode == zoneStrided && j.ZoneSize == 0:
			errs = append(errs, fmt.Errorf("%s: job %s: %w: --zonesize must be specified when using --zonemode=strided (fio)", j.Origin, j.Name, ErrInvalidValue))
		}
	}
	return errs
}
