package fio

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// option is one supported fio job option: how to apply its value to a Job,
// and fio's --cmdhelp text for it.
type option struct {
	// flag options may be given without a value, meaning "1".
	flag  bool
	help  string
	apply func(j *fiov1.Job, v string) error
}

// options is the supported set, by fio name (aliases included; see
// aliases). An option in refused is refused with its reason; anything else
// is ErrUnknownOption: an ignored option would silently change what is
// measured.
var options = map[string]option{}

// aliases maps fio's alternative names to the option's main name.
var aliases = map[string]string{
	"readwrite": "rw", "blocksize": "bs", "blocksize_range": "bsrange", "ba": "blockalign",
	"io_limit": "io_size", "nr_files": "nrfiles", "timeout": "runtime",
	"iodepth_batch": "iodepth_batch_submit", "iodepth_batch_complete": "iodepth_batch_complete_min",
	"wait_barrier": "stonewall", "threads": "thread", "ratemin": "rate_min",
	"wait_for_previous": "stonewall", "fill_fs": "fill_device", "fileoffset": "offset", "disable_bw": "disable_bw_measurement",
}

func init() {
	for _, o := range optionTable {
		options[o.name] = o.option
	}
	for alias, name := range aliases {
		if o, ok := options[name]; ok {
			options[alias] = o
		}
	}
}

// namedOption is one row of optionTable.
type namedOption struct {
	name string
	option
}

func opt(name string, flag bool, help string, apply func(*fiov1.Job, string) error) namedOption {
	return namedOption{name, option{flag: flag, help: help, apply: apply}}
}

// optionTable lists the supported options in fio's --cmdhelp=all order
// (roughly: description, files, I/O type, sizes, engines, timing, rates,
// buffers, verification, logging, reporting).
var optionTable = []namedOption{
	opt("name", false, "Name of this job", func(j *fiov1.Job, v string) error { j.Name = v; return nil }),
	opt("description", false, "Text job description", func(j *fiov1.Job, v string) error { j.Description = v; return nil }),
	opt("filename", false, "File(s) to use for the workload", setFilename),
	opt("directory", false, "Directory to store files in", func(j *fiov1.Job, v string) error { j.Directory = v; return nil }),
	opt("nrfiles", false, "Split job workload between this number of files", setNrfiles),
	opt("filesize", false, "Size of individual files", setFilesize),
	opt("file_service_type", false, "How to select which file to service next", setFileService),
	opt("filename_format", false, "Override default $jobname.$jobnum.$filenum naming", setFilenameFormat),
	opt("openfiles", false, "Number of files to keep open at the same time", uintOpt(0, maxFiles, func(j *fiov1.Job, n uint64) { j.OpenFiles = uint32(n) })),
	opt("create_on_open", true, "Create files when they are opened for IO", boolOpt(func(j *fiov1.Job, b bool) { j.CreateOnOpen = b })),
	opt("fill_device", true, "Write until an ENOSPC error occurs", boolOpt(func(j *fiov1.Job, b bool) { j.FillDevice = b })),
	opt("unlink", true, "Unlink created files after job has completed", boolOpt(func(j *fiov1.Job, b bool) { j.Unlink = b })),
	opt("unlink_each_loop", true, "Unlink created files after each loop in a job has completed", setUnlinkEachLoop),
	opt("rw", false, "IO direction", setRW),
	opt("rwmixread", false, "Percentage of mixed workload that is reads", uintOpt(0, 100, func(j *fiov1.Job, n uint64) { j.Rwmixread = uint32(n) })),
	opt("rwmixwrite", false, "Percentage of mixed workload that is writes", uintOpt(0, 100, func(j *fiov1.Job, n uint64) { j.Rwmixread = uint32(100 - n) })),
	opt("bs", false, "Block size unit", setBS),
	opt("bsrange", false, "Set block size range (in more detail than bs)", setBSRange),
	opt("bssplit", false, "Set a specific mix of block sizes", setBSSplit),
	opt("blockalign", false, "IO block offset alignment", setBlockAlign),
	opt("size", false, "Total size of device or files", setSize),
	opt("io_size", false, "Total size of I/O to be performed", sizeOpt(func(j *fiov1.Job, n uint64) { j.IoSize = n })),
	opt("offset", false, "Start IO from this offset", setOffset),
	opt("zonemode", false, "Mode for the zonesize, zonerange and zoneskip parameters (none, strided; zbd is refused when run)", setZoneMode),
	opt("zonesize", false, "Amount of data to read per zone", sizeOpt(func(j *fiov1.Job, n uint64) { j.ZoneSize = n })),
	opt("zonerange", false, "Give size of an IO zone", sizeOpt(func(j *fiov1.Job, n uint64) { j.ZoneRange = n })),
	opt("zoneskip", false, "Space between IO zones", sizeOpt(func(j *fiov1.Job, n uint64) { j.ZoneSkip = n })),
	opt("offset_increment", false, "What is the increment from one offset to the next", sizeOpt(func(j *fiov1.Job, n uint64) { j.OffsetIncrement = n })),
	opt("number_ios", false, "Force job completion after this number of IOs", uintOpt(0, math.MaxUint64, func(j *fiov1.Job, n uint64) { j.NumberIos = n })),
	opt("numjobs", false, "Duplicate this job this many times", uintOpt(1, maxJobs, func(j *fiov1.Job, n uint64) { j.Numjobs = uint32(n) })),
	opt("thread", true, "Use threads instead of processes (writepath always runs jobs as threads)", boolOpt(func(j *fiov1.Job, b bool) { j.Thread = b })),
	opt("ioengine", false, "IO engine to use", setEngine),
	opt("iodepth", false, "Number of IO buffers to keep in flight", uintOpt(1, 1<<16, func(j *fiov1.Job, n uint64) { j.Iodepth = uint32(n) })),
	opt("iodepth_batch_submit", false, "Number of IO buffers to submit in one go", uintOpt(0, 1<<16, func(j *fiov1.Job, n uint64) { j.IodepthBatchSubmit = uint32(n) })),
	opt("iodepth_batch_complete_min", false, "Min number of IO buffers to retrieve in one go", uintOpt(0, 1<<16, func(j *fiov1.Job, n uint64) { j.IodepthBatchCompleteMin = uint32(n) })),
	opt("iodepth_batch_complete_max", false, "Max number of IO buffers to retrieve in one go", uintOpt(0, 1<<16, func(j *fiov1.Job, n uint64) { j.IodepthBatchCompleteMax = uint32(n) })),
	opt("iodepth_low", false, "Low water mark for queuing depth", uintOpt(0, 1<<16, func(j *fiov1.Job, n uint64) { j.IodepthLow = uint32(n) })),
	opt("prioclass", false, "Set job IO priority class", uintOpt(0, ioprioClassMax, func(j *fiov1.Job, n uint64) {
		j.Ioprio, j.IoprioSet = j.Ioprio&0x1fff|uint32(n)<<13, true
	})),
	opt("prio", false, "Set job IO priority value", uintOpt(0, ioprioLevelMax, func(j *fiov1.Job, n uint64) {
		j.Ioprio, j.IoprioSet = j.Ioprio&^0x1fff|uint32(n), true
	})),
	opt("cmdprio_percentage", false, "Send high priority I/O this percentage of the time (libaio, io_uring)", setPrioDirs(0, 100, func(j *fiov1.Job) *[]uint32 { return &j.CmdprioPercentage })),
	opt("cmdprio_class", false, "Set asynchronous IO priority class (libaio, io_uring)", setPrioDirs(1, ioprioClassMax, func(j *fiov1.Job) *[]uint32 { return &j.CmdprioClass })),
	opt("cmdprio", false, "Set asynchronous IO priority level (libaio, io_uring)", setPrioDirs(0, ioprioLevelMax, func(j *fiov1.Job) *[]uint32 { return &j.CmdprioLevel })),
	opt("cmdprio_bssplit", false, "Set priority percentages for different block sizes (libaio, io_uring)", setCmdprioSplit),
	opt("direct", true, "Use O_DIRECT IO (negates buffered)", boolOpt(func(j *fiov1.Job, b bool) { j.Direct = b })),
	opt("buffered", true, "Use buffered IO (negates direct)", boolOpt(func(j *fiov1.Job, b bool) { j.Direct = !b })),
	opt("sync", true, "Use synchronous write IO (none, sync, dsync)", setSync),
	opt("fsync", false, "Issue fsync for writes every given number of blocks", uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.Fsync = uint32(n) })),
	opt("fdatasync", false, "Issue fdatasync for writes every given number of blocks", uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.Fdatasync = uint32(n) })),
	opt("end_fsync", true, "Include fsync at the end of job", boolOpt(func(j *fiov1.Job, b bool) { j.EndFsync = b })),
	opt("fsync_on_close", true, "fsync files on close", boolOpt(func(j *fiov1.Job, b bool) { j.FsyncOnClose = b })),
	opt("invalidate", true, "Invalidate buffer/page cache prior to running job", boolOpt(func(j *fiov1.Job, b bool) { j.Invalidate = b })),
	opt("fallocate", false, "Whether pre-allocation is performed when laying out files", setFallocate),
	opt("overwrite", true, "When writing, set whether to overwrite current data", boolOpt(func(j *fiov1.Job, b bool) { j.Overwrite = b })),
	opt("loops", false, "Number of times to run the job", uintOpt(1, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.Loops = uint32(n) })),
	opt("runtime", false, "Stop workload when this amount of time has passed", timeOpt(func(j *fiov1.Job, ns int64) { j.RuntimeNs = ns })),
	opt("time_based", true, "Keep running until runtime/timeout is met", boolOpt(func(j *fiov1.Job, b bool) { j.TimeBased = b })),
	opt("ramp_time", false, "Ramp up time before measuring performance", timeOpt(func(j *fiov1.Job, ns int64) { j.RampTimeNs = ns })),
	opt("startdelay", false, "Only start job when this period has passed", timeOpt(func(j *fiov1.Job, ns int64) { j.StartdelayNs = ns })),
	opt("thinktime", false, "Idle time between IO buffers (usec)", usecOpt(func(j *fiov1.Job, ns int64) { j.ThinktimeNs = ns })),
	opt("thinktime_spin", false, "Start think time by spinning this amount (usec)", usecOpt(func(j *fiov1.Job, ns int64) { j.ThinktimeSpinNs = ns })),
	opt("thinktime_blocks", false, "IO buffer period between 'thinktime'", uintOpt(1, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.ThinktimeBlocks = uint32(n) })),
	opt("exitall", true, "Terminate all jobs when one exits", boolOpt(func(j *fiov1.Job, b bool) { j.Exitall = b })),
	opt("exit_what", false, "Fine-grained control for exitall (group, stonewall, all)", setExitWhat),
	opt("stonewall", true, "Insert a hard barrier between this job and previous", boolOpt(func(j *fiov1.Job, b bool) { j.Stonewall = b })),
	opt("new_group", true, "Mark the start of a new group (for reporting)", boolOpt(func(j *fiov1.Job, b bool) { j.NewGroup = b })),
	opt("wait_for", false, "Wait for the named job to finish before starting", func(j *fiov1.Job, v string) error { j.WaitFor = v; return nil }),
	opt("cpus_allowed", false, "Set CPUs allowed", setCPUsAllowed),
	opt("cpumask", false, "CPU affinity mask", setCPUMask),
	opt("cpus_allowed_policy", false, "Distribution policy for cpus_allowed (shared, split)", setCPUsPolicy),
	opt("rate", false, "Set bandwidth rate", bytesPerDir(func(j *fiov1.Job) *[]uint64 { return &j.Rate })),
	opt("rate_min", false, "Job must meet this rate or it will be shutdown", bytesPerDir(func(j *fiov1.Job) *[]uint64 { return &j.RateMin })),
	opt("rate_iops", false, "Limit IO used to this number of IO operations/sec", setRateIops),
	opt("rate_iops_min", false, "Job must meet this rate or it will be shut down", uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.RateIopsMin = n })),
	opt("flow_id", false, "The flow index ID to use", uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.FlowId = uint32(n) })),
	opt("flow", false, "Weight for flow control of this job", uintOpt(0, flowMaxWeight, func(j *fiov1.Job, n uint64) { j.Flow = uint32(n) })),
	opt("flow_sleep", false, "How many microseconds to sleep after being held back by the flow control mechanism", setFlowSleep),
	opt("io_submit_mode", false, "How IO submissions and completions are done (inline, offload)", setSubmitMode),
	opt("serialize_overlap", true, "Wait for in-flight IOs that collide to complete", boolOpt(func(j *fiov1.Job, b bool) { j.SerializeOverlap = b })),
	opt("continue_on_error", false, "Continue on non-fatal errors during IO", setContinueOnError),
	opt("ignore_error", false, "Set a specific list of errors to ignore", setIgnoreError),
	opt("max_latency", false, "Maximum tolerated IO latency (usec)", setMaxLatency),
	opt("latency_target", false, "Ramp to max queue depth supporting this latency", usecOpt(func(j *fiov1.Job, ns int64) { j.LatencyTargetNs = uint64(ns) })),
	opt("latency_window", false, "Time to sustain latency_target", usecOpt(func(j *fiov1.Job, ns int64) { j.LatencyWindowNs = uint64(ns) })),
	opt("latency_percentile", false, "Percentile of IOs must be below latency_target", setLatencyPercentile),
	opt("latency_run", true, "Keep adjusting queue depth to match latency_target", boolOpt(func(j *fiov1.Job, b bool) { j.LatencyRun = b })),
	opt("rate_process", false, "What process controls how rated IO is managed (linear, poisson)", setRateProcess),
	opt("randrepeat", true, "Use repeatable random IO pattern", boolOpt(func(j *fiov1.Job, b bool) { j.Randrepeat = b })),
	opt("randseed", false, "Set the random generator seed value", uintOpt(0, math.MaxUint64, func(j *fiov1.Job, n uint64) { j.Randseed = n })),
	opt("norandommap", true, "Accept potential duplicate random blocks", boolOpt(func(j *fiov1.Job, b bool) { j.Norandommap = b })),
	opt("random_generator", false, "Type of random number generator to use (writepath draws with PCG; with lfsr every block is visited once per loop, norandommap or not, as fio's LFSR does)", setRandomGenerator),
	opt("random_distribution", false, "Random offset distribution generator (random, zipf:T, pareto:H, normal:D, zoned:..., zoned_abs:...)", setDistribution),
	opt("refill_buffers", true, "Refill IO buffers on every IO submit", boolOpt(func(j *fiov1.Job, b bool) { j.RefillBuffers = b })),
	opt("scramble_buffers", true, "Slightly scramble buffers on every IO submit", boolOpt(func(j *fiov1.Job, b bool) { j.ScrambleBuffers = b })),
	opt("zero_buffers", true, "Init IO buffers to all zeroes", boolOpt(func(j *fiov1.Job, b bool) { j.ZeroBuffers = b })),
	opt("buffer_compress_percentage", false, "How compressible the buffer is (approximately)", uintOpt(0, 100, func(j *fiov1.Job, n uint64) { j.BufferCompressPercentage = uint32(n) })),
	opt("buffer_compress_chunk", false, "Size of compressible region in buffer", sizeOpt(func(j *fiov1.Job, n uint64) { j.BufferCompressChunk = n })),
	opt("verify", false, "Verify data written (md5, crc32c, crc32, crc64, sha1, sha256, sha512, xxhash, crc16, crc7, meta, pattern, null)", setVerify),
	opt("do_verify", true, "Run verification stage after write", boolOpt(func(j *fiov1.Job, b bool) { j.DoVerify = b })),
	opt("verify_fatal", true, "Exit on a single verify failure, don't continue", boolOpt(func(j *fiov1.Job, b bool) { j.VerifyFatal = b })),
	opt("verify_interval", false, "Store verify buffer header every N bytes", sizeOpt(func(j *fiov1.Job, n uint64) { j.VerifyInterval = n })),
	opt("verify_backlog", false, "Verify after this number of blocks are written", uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.VerifyBacklog = n })),
	opt("experimental_verify", true, "Enable experimental verification (writepath checks the blocks it recorded writing either way: the same blocks are read back and the same failures caught)", boolOpt(func(*fiov1.Job, bool) {})),
	opt("verify_pattern", false, "Fill pattern for IO buffers", setVerifyPattern),
	opt("buffer_pattern", false, "Pass the pattern to fill IO buffers with", setBufferPattern),
	opt("verify_dump", true, "Dump contents of good and bad blocks on failure", boolOpt(func(j *fiov1.Job, b bool) { j.VerifyDump = b })),
	opt("write_iolog", false, "Store IO pattern to file", func(j *fiov1.Job, v string) error { j.WriteIolog = v; return nil }),
	opt("read_iolog", false, "Playback IO pattern from file", setReadIolog),
	opt("replay_no_stall", true, "Playback IO pattern file as fast as possible without stalls", boolOpt(func(j *fiov1.Job, b bool) { j.ReplayNoStall = b })),
	opt("replay_time_scale", false, "Scale time for replay events", uintOpt(1, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.ReplayTimeScale = uint32(n) })),
	opt("replay_redirect", false, "Replay all I/O onto this file, regardless of trace device", func(j *fiov1.Job, v string) error { j.ReplayRedirect = v; return nil }),
	opt("write_lat_log", true, "Write log of latency during run", logName(func(l *fiov1.Logs) *string { return &l.Lat })),
	opt("write_bw_log", true, "Write log of bandwidth during run", logName(func(l *fiov1.Logs) *string { return &l.Bw })),
	opt("write_iops_log", true, "Write log of IOPS during run", logName(func(l *fiov1.Logs) *string { return &l.Iops })),
	opt("write_hist_log", true, "Write log of latency histograms during run", logName(func(l *fiov1.Logs) *string { return &l.Hist })),
	opt("log_avg_msec", false, "Average bw/iops/lat logs over this period of time", logMsec(func(l *fiov1.Logs) *uint64 { return &l.AvgMsec })),
	opt("log_hist_msec", false, "Dump completion latency histograms at frequency of this time value", logMsec(func(l *fiov1.Logs) *uint64 { return &l.HistMsec })),
	opt("log_hist_coarseness", false, "Integer in range [0,6]. Higher coarseness outputs fewer histogram bins per sample", uintOpt(0, 6, func(j *fiov1.Job, n uint64) { logsOf(j).HistCoarseness = uint32(n) })),
	opt("log_max_value", true, "Log max sample in a window instead of average", boolOpt(func(j *fiov1.Job, b bool) { logsOf(j).MaxValue = b })),
	opt("log_compression", false, "Log in compressed chunks of this size", sizeOpt(func(j *fiov1.Job, n uint64) { logsOf(j).Compression = n })),
	opt("log_store_compressed", true, "Store logs in a compressed format", boolOpt(func(j *fiov1.Job, b bool) { logsOf(j).StoreCompressed = b })),
	opt("log_offset", true, "Include offset of IO for each log entry", boolOpt(func(j *fiov1.Job, b bool) { logsOf(j).Offset = b })),
	opt("log_prio", true, "Include priority value of IO for each log entry", boolOpt(func(j *fiov1.Job, b bool) { j.LogPrio = b })),
	opt("per_job_logs", true, "Include job number in generated log files or not", boolOpt(func(j *fiov1.Job, b bool) { logsOf(j).PerJob = b })),
	opt("log_unix_epoch", true, "Use Unix time in log files", boolOpt(func(j *fiov1.Job, b bool) { logsOf(j).UnixEpoch = b })),
	opt("gtod_reduce", true, "Greatly reduce number of gettimeofday() calls (no latencies, bandwidth samples or percentiles in the report; writepath still times each I/O for the fabric's intervals)", setGtodReduce),
	opt("disable_lat", true, "Disable latency numbers", boolOpt(func(j *fiov1.Job, b bool) { j.DisableLat = b })),
	opt("disable_clat", true, "Disable completion latency numbers", boolOpt(func(j *fiov1.Job, b bool) { j.DisableClat = b })),
	opt("disable_slat", true, "Disable submission latency numbers", boolOpt(func(j *fiov1.Job, b bool) { j.DisableSlat = b })),
	opt("disable_bw_measurement", true, "Disable bandwidth logging", boolOpt(func(j *fiov1.Job, b bool) { j.DisableBw = b })),
	opt("group_reporting", true, "Do reporting on a per-group basis", boolOpt(func(j *fiov1.Job, b bool) { j.GroupReporting = b })),
	opt("unified_rw_reporting", true, "Unify reporting across data direction (0/none, 1/mixed)", setUnified),
	opt("clat_percentiles", true, "Enable the reporting of completion latency percentiles", boolOpt(func(j *fiov1.Job, b bool) { j.ClatPercentiles = b })),
	opt("lat_percentiles", true, "Enable the reporting of IO latency percentiles", boolOpt(func(j *fiov1.Job, b bool) { j.LatPercentiles = b })),
	opt("slat_percentiles", true, "Enable the reporting of submission latency percentiles", boolOpt(func(j *fiov1.Job, b bool) { j.SlatPercentiles = b })),
	opt("percentile_list", false, "Specify a custom list of percentiles to report for completion latency and block errors", setPercentiles),
}

// supportedNames lists the option names for error messages.
func supportedNames() string {
	names := make([]string, 0, len(options))
	for n := range options {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// defaultJob returns a Job with fio 3.33's defaults for the supported set.
func defaultJob() *fiov1.Job {
	return &fiov1.Job{
		Rw:              fiov1.ReadWrite_READ_WRITE_READ,
		Rwmixread:       50,
		Bs:              4096,
		ReadBs:          &fiov1.BlockSizes{Min: 4096, Max: 4096},
		WriteBs:         &fiov1.BlockSizes{Min: 4096, Max: 4096},
		TrimBs:          &fiov1.BlockSizes{Min: 4096, Max: 4096},
		Numjobs:         1,
		Iodepth:         1,
		Ioengine:        fiov1.IOEngine_IO_ENGINE_PSYNC,
		Sync:            fiov1.SyncMode_SYNC_MODE_NONE,
		Randrepeat:      true,
		Randseed:        0x89,
		Fallocate:       fiov1.Fallocate_FALLOCATE_NATIVE,
		Loops:           1,
		Invalidate:      true,
		ClatPercentiles: true,
		// Verify stays UNSPECIFIED (no verification) until verify= is
		// given: verify_pattern= makes the job verify=pattern only then,
		// as fio's fio_option_is_set(verify).
		Verify:             fiov1.Verify_VERIFY_UNSPECIFIED,
		DoVerify:           true,
		RateProcess:        fiov1.RateProcess_RATE_PROCESS_LINEAR,
		Logs:               &fiov1.Logs{PerJob: true},
		IodepthBatchSubmit: 1, IodepthBatchCompleteMin: 1, ThinktimeBlocks: 1,
		RandomDistribution: fiov1.Distribution_DISTRIBUTION_RANDOM,
	}
}

func logsOf(j *fiov1.Job) *fiov1.Logs {
	if j.Logs == nil {
		j.Logs = &fiov1.Logs{PerJob: true}
	}
	return j.Logs
}

func uintOpt(lo, hi uint64, set func(*fiov1.Job, uint64)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		n, err := parseCount(v, lo, hi)
		if err != nil {
			return err
		}
		set(j, n)
		return nil
	}
}

// parseCount reads an integer option's value within [lo, hi] as fio 3.33
// does (its FIO_OPT_INT and ULL go through str_to_decimal like sizes): a
// decimal or 0x number, a k/m/g unit allowed ("iodepth=1k" is 1024), a
// tail fio ignores taken where it drops nothing meant ("16)").
func parseCount(v string, lo, hi uint64) (uint64, error) {
	if isExpr(v) {
		return parseUint(v, lo, hi)
	}
	n, err := parseSize(v)
	var rr runRefusal
	switch {
	case errors.As(err, &rr):
		return 0, err
	case err != nil:
		return 0, fmt.Errorf("%q is not a whole number", v)
	case n < lo:
		return 0, fmt.Errorf("min value out of range: %d (%d min)", n, lo)
	case n > hi:
		return 0, fmt.Errorf("max value out of range: %d (%d max)", n, hi)
	}
	return n, nil
}

func sizeOpt(set func(*fiov1.Job, uint64)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		if strings.HasSuffix(strings.TrimSpace(v), "%") {
			return fmt.Errorf("%q: a percentage is not accepted here; give bytes (e.g. 1G)", v)
		}
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		set(j, n)
		return nil
	}
}

// percentOf reads "N%" (1..100) or returns ok=false for a plain size.
func percentOf(v string) (uint32, bool, error) {
	num, isPct := strings.CutSuffix(strings.TrimSpace(v), "%")
	if !isPct {
		return 0, false, nil
	}
	n, err := parseUint(num, 1, 100)
	return uint32(n), true, err
}

// setSize reads size=, a byte count or fio's N% of the file's (or
// device's) real size.
func setSize(j *fiov1.Job, v string) error {
	pct, ok, err := percentOf(v)
	if ok || err != nil {
		j.SizePercent, j.Size = pct, 0
		return err
	}
	j.SizePercent = 0
	return sizeOpt(func(j *fiov1.Job, n uint64) { j.Size = n })(j, v)
}

// setOffset reads offset=, a byte count or N% of the file's real size.
func setOffset(j *fiov1.Job, v string) error {
	pct, ok, err := percentOf(v)
	if ok || err != nil {
		j.OffsetPercent, j.Offset = pct, 0
		return err
	}
	j.OffsetPercent = 0
	return sizeOpt(func(j *fiov1.Job, n uint64) { j.Offset = n })(j, v)
}

func timeOpt(set func(*fiov1.Job, int64)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		d, err := parseTime(v)
		if err != nil {
			return err
		}
		set(j, int64(d))
		return nil
	}
}

func boolOpt(set func(*fiov1.Job, bool)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		set(j, b)
		return nil
	}
}

// splitFilenames splits filename=a:b at unescaped colons ("\:" is a colon
// in a name, as fio reads it).
func splitFilenames(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ':':
			cur.WriteByte(':')
			i++
		case v[i] == ':':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(v[i])
		}
	}
	return append(out, cur.String())
}

var rwNames = map[string]fiov1.ReadWrite{
	"read": fiov1.ReadWrite_READ_WRITE_READ, "write": fiov1.ReadWrite_READ_WRITE_WRITE,
	"randread": fiov1.ReadWrite_READ_WRITE_RANDREAD, "randwrite": fiov1.ReadWrite_READ_WRITE_RANDWRITE,
	"rw": fiov1.ReadWrite_READ_WRITE_RW, "readwrite": fiov1.ReadWrite_READ_WRITE_RW,
	"randrw": fiov1.ReadWrite_READ_WRITE_RANDRW,
	"trim":   fiov1.ReadWrite_READ_WRITE_TRIM, "randtrim": fiov1.ReadWrite_READ_WRITE_RANDTRIM,
	"trimwrite": fiov1.ReadWrite_READ_WRITE_TRIMWRITE, "randtrimwrite": fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE,
}

// setRW reads rw=, with fio's ":N" suffix: for sequential patterns a hole
// of N bytes after each I/O, for random ones N I/Os per random offset.
func setRW(j *fiov1.Job, v string) error {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(v), ":")
	rw, ok := rwNames[name]
	if !ok {
		return fmt.Errorf("%q: want read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite or randtrimwrite (optionally :N)", v)
	}
	j.Rw, j.RwSeqAdd, j.RwSeqNr = rw, 0, 0
	if !hasArg {
		return nil
	}
	switch rw {
	case fiov1.ReadWrite_READ_WRITE_RANDREAD, fiov1.ReadWrite_READ_WRITE_RANDWRITE, fiov1.ReadWrite_READ_WRITE_RANDRW,
		fiov1.ReadWrite_READ_WRITE_RANDTRIM, fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE:
		n, err := parseUint(arg, 1, math.MaxUint32)
		if err != nil {
			return err
		}
		j.RwSeqNr = uint32(n)
	default:
		// rw=read:-8k reads backwards, as fio: the hole is negative.
		neg := strings.HasPrefix(strings.TrimSpace(arg), "-")
		n, err := parseSize(strings.TrimPrefix(strings.TrimSpace(arg), "-"))
		if err != nil {
			return err
		}
		if n > math.MaxInt64 {
			return fmt.Errorf("%q: hole too large", arg)
		}
		if neg {
			n = uint64(-int64(n)) // two's complement: gen reads it signed
		}
		j.RwSeqAdd = n
	}
	return nil
}

var engineNames = map[string]fiov1.IOEngine{
	"psync": fiov1.IOEngine_IO_ENGINE_PSYNC, "sync": fiov1.IOEngine_IO_ENGINE_SYNC,
	"pvsync": fiov1.IOEngine_IO_ENGINE_PVSYNC, "libaio": fiov1.IOEngine_IO_ENGINE_LIBAIO,
	"io_uring": fiov1.IOEngine_IO_ENGINE_IO_URING, "null": fiov1.IOEngine_IO_ENGINE_NULL,
	"pvsync2": fiov1.IOEngine_IO_ENGINE_PVSYNC2, "posixaio": fiov1.IOEngine_IO_ENGINE_POSIXAIO,
	"mmap": fiov1.IOEngine_IO_ENGINE_MMAP,
}

func setEngine(j *fiov1.Job, v string) error {
	e, ok := engineNames[strings.TrimSpace(v)]
	if !ok {
		// fio loads an engine only when the job runs (or names one of its
		// options), so a job file names any: refused at run time.
		if why, refused := refusedEngines[strings.TrimSpace(v)]; refused {
			return runRefusal(why)
		}
		return runRefusal("no such engine here (writepath runs " + strings.Join(engineList(), ", ") + ")")
	}
	j.Ioengine = e
	return nil
}

// engineList names the supported engines, sorted.
func engineList() []string {
	var out []string
	for n := range engineNames {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func setSync(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "0", "none":
		j.Sync = fiov1.SyncMode_SYNC_MODE_NONE
	case "1", "sync":
		j.Sync = fiov1.SyncMode_SYNC_MODE_SYNC
	case "dsync":
		j.Sync = fiov1.SyncMode_SYNC_MODE_DSYNC
	default:
		return fmt.Errorf("%q: want none, 0, sync, 1 or dsync", v)
	}
	return nil
}

var fallocateNames = map[string]fiov1.Fallocate{
	"none": fiov1.Fallocate_FALLOCATE_NONE, "0": fiov1.Fallocate_FALLOCATE_NONE,
	"native": fiov1.Fallocate_FALLOCATE_NATIVE, "posix": fiov1.Fallocate_FALLOCATE_POSIX,
	"1": fiov1.Fallocate_FALLOCATE_POSIX, "keep": fiov1.Fallocate_FALLOCATE_KEEP,
	"truncate": fiov1.Fallocate_FALLOCATE_TRUNCATE,
}

func setFallocate(j *fiov1.Job, v string) error {
	f, ok := fallocateNames[strings.TrimSpace(v)]
	if !ok {
		return fmt.Errorf("%q: want none, native, posix, keep, truncate, 0 or 1", v)
	}
	j.Fallocate = f
	return nil
}
