package fio

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// refusedEngines are fio engines that cannot run here, and why.
var refusedEngines = map[string]string{
	"sg": "SCSI generic devices are not supported", "net": "network I/O is not a storage write path",
	"netsplice": "network I/O is not a storage write path", "rdma": "needs RDMA hardware",
	"cpuio": "burns CPU instead of doing I/O; not offered", "splice": "not supported; use psync",
	"e4defrag": "defragments files instead of measuring I/O; not offered",
	"falloc":   "issues fallocate instead of I/O; not offered", "ftruncate": "issues ftruncate instead of I/O; not offered",
	"filecreate": "measures file creation, not I/O; not offered", "filestat": "measures stat, not I/O; not offered",
	"filedelete": "measures unlink, not I/O; not offered", "exec": "runs programs; not offered",
	"io_uring_cmd": "needs NVMe passthrough character devices", "xnvme": "needs the xNVMe library",
	"libpmem": "needs persistent memory", "dev-dax": "needs a device-DAX character device",
	"http": "HTTP object stores are not a storage write path", "nbd": "needs an NBD server",
	"rados": "needs a Ceph cluster", "rbd": "needs a Ceph cluster", "gfapi": "needs GlusterFS",
	"libhdfs": "needs HDFS", "libiscsi": "needs an iSCSI target", "nfs": "needs libnfs",
	"mtd": "needs an MTD device", "dfs": "needs DAOS", "libcufile": "needs GPUDirect Storage",
	"ime_psync": "needs DDN IME", "ime_psyncv": "needs DDN IME", "ime_aio": "needs DDN IME",
	"libzbc": "needs a zoned block device", "windowsaio": "Windows only", "solarisaio": "Solaris only",
	"guasi": "needs libguasi", "binject": "needs the binject kernel module",
}

// refused are fio job options that cannot apply here, and why; any other
// unknown name is ErrUnknownOption.
var refused = map[string]string{
	"verify_async":         "verification runs in the job's own thread",
	"zonemode":             "zoned block devices (zonemode=zbd and its options) are not supported",
	"trim_percentage":      "trims of blocks written (trim_percentage, trim_verify_zero) are not issued; use rw=trim, randtrim, trimwrite or randtrimwrite",
	"log_compression_cpus": "logs are compressed in the job's own thread, a chunk at a time",
	"exitall_on_error":     "jobs are not stopped when one fails",
	"steadystate":          "steady-state detection is not supported",
	"ss":                   "steady-state detection is not supported",
	"mem":                  "I/O buffers are always anonymous memory (mmap)",
	"iomem":                "I/O buffers are always anonymous memory (mmap)",
	"create_serialize":     "files are laid out one after the other",
	"numa_cpu_nodes":       "NUMA placement is not supported; use cpus_allowed",
	"numa_mem_policy":      "NUMA placement is not supported",
	"nice":                 "CPU priorities are not supported",
	"cgroup":               "cgroups are not managed",
	"exec_prerun":          "running commands on the load host is not offered",
	"exec_postrun":         "running commands on the load host is not offered",
	"lockfile":             "file locking between jobs is not supported",
	"dedupe_percentage":    "deduplicable buffers are not generated",
	"kb_base":              "sizes are read base 1024 (fio's default kb_base=1024)",
	"unit_base":            "bandwidth is reported in bytes (fio's default)",
}

// notYet are options in the table whose semantics are not built yet:
// refused, never silently ignored.
var notYet = map[string]bool{
	"write_lat_log": true, "write_bw_log": true, "write_iops_log": true, "write_hist_log": true,
	"log_avg_msec": true, "log_hist_msec": true, "log_hist_coarseness": true, "log_max_value": true,
	"log_offset": true, "per_job_logs": true, "log_unix_epoch": true,
	"scramble_buffers": true,
}

func init() {
	for _, n := range []string{"write_lat_log", "write_bw_log", "write_iops_log", "write_hist_log",
		"log_avg_msec", "log_hist_msec", "log_hist_coarseness", "log_max_value", "log_offset", "per_job_logs"} {
		delete(notYet, n)
	}
}

// splitDirs splits a per-direction value "R,W,T": one value applies to all
// directions; with commas, an empty part leaves that direction as it is.
func splitDirs(v string) (parts [3]string, set [3]bool) {
	if !strings.Contains(v, ",") {
		return [3]string{v, v, v}, [3]bool{true, true, true}
	}
	for i, p := range strings.SplitN(v, ",", 3) {
		if p = strings.TrimSpace(p); p != "" {
			parts[i], set[i] = p, true
		}
	}
	return parts, set
}

// blocksOf returns direction d's block sizes (0 read, 1 write, 2 trim).
func blocksOf(j *fiov1.Job, d int) *fiov1.BlockSizes {
	p := &j.ReadBs
	switch d {
	case dirWrite:
		p = &j.WriteBs
	case dirTrim:
		p = &j.TrimBs
	}
	if *p == nil {
		*p = &fiov1.BlockSizes{Min: j.Bs, Max: j.Bs}
	}
	return *p
}

// perDir applies parse to each direction a per-direction value names.
func perDir(j *fiov1.Job, v string, parse func(b *fiov1.BlockSizes, part string) error) error {
	parts, set := splitDirs(v)
	for d := range parts {
		if !set[d] {
			continue
		}
		b := blocksOf(j, d)
		if err := parse(b, parts[d]); err != nil {
			return err
		}
	}
	return nil
}

func blockSize(s string) (uint64, error) {
	n, err := parseSize(s)
	if err != nil {
		return 0, err
	}
	if n == 0 || n > 1<<30 {
		return 0, fmt.Errorf("%q: block size must be between 1 byte and 1g", s)
	}
	return n, nil
}

// setBS reads bs=, one size or fio's "R,W[,T]".
func setBS(j *fiov1.Job, v string) error {
	return perDir(j, v, func(b *fiov1.BlockSizes, part string) error {
		n, err := blockSize(part)
		if err != nil {
			return err
		}
		b.Min, b.Max, b.Split = n, n, nil
		return nil
	})
}

// setBSRange reads bsrange=, "min-max" (or "min:max") per direction.
func setBSRange(j *fiov1.Job, v string) error {
	return perDir(j, v, func(b *fiov1.BlockSizes, part string) error {
		lo, hi, ok := strings.Cut(part, "-")
		if !ok {
			lo, hi, ok = strings.Cut(part, ":")
		}
		if !ok {
			return fmt.Errorf("%q: want min-max", part)
		}
		lo, hi = rangeBound(lo), rangeBound(hi)
		a, err := blockSize(lo)
		if err != nil {
			return err
		}
		z, err := blockSize(hi)
		if err != nil {
			return err
		}
		b.Min, b.Max, b.Split = min(a, z), max(a, z), nil
		return nil
	})
}

// rangeBound is one side of a range as fio's check_range_bytes reads it:
// the leading number and unit, whatever follows ignored (fio's own t0023
// gives bsrange=512/25:1k:..., which fio reads as 512-1k).
func rangeBound(s string) string {
	s = strings.TrimSpace(s)
	for i, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.') {
			return s[:i]
		}
	}
	return s
}

// setBSSplit reads bssplit=, "bs/percent:bs/percent..." per direction; the
// percent left over is shared by the entries given without one, as fio
// does.
func setBSSplit(j *fiov1.Job, v string) error {
	return perDir(j, v, func(b *fiov1.BlockSizes, part string) error {
		var split []*fiov1.BlockSplit
		total, bare := uint32(0), 0
		for _, e := range strings.Split(part, ":") {
			bsText, pctText, hasPct := strings.Cut(e, "/")
			n, err := blockSize(bsText)
			if err != nil {
				return err
			}
			s := &fiov1.BlockSplit{Bs: n}
			if hasPct {
				p, err := parseUint(pctText, 0, 100)
				if err != nil {
					return err
				}
				s.Percent = uint32(p)
				total += s.Percent
			} else {
				bare++
			}
			split = append(split, s)
		}
		if total > 100 {
			return fmt.Errorf("%q: percentages add up to %d (more than 100)", part, total)
		}
		if bare > 0 {
			share, rest := (100-total)/uint32(bare), (100-total)%uint32(bare)
			for _, s := range split {
				if s.Percent == 0 {
					s.Percent = share
					if rest > 0 {
						s.Percent++
						rest--
					}
				}
			}
		} else if total < 100 {
			// fio gives the remainder to the last entry.
			split[len(split)-1].Percent += 100 - total
		}
		b.Split = split
		b.Min, b.Max = split[0].Bs, split[0].Bs
		for _, s := range split {
			b.Min, b.Max = min(b.Min, s.Bs), max(b.Max, s.Bs)
		}
		return nil
	})
}

// setBlockAlign reads blockalign= per direction.
func setBlockAlign(j *fiov1.Job, v string) error {
	return perDir(j, v, func(b *fiov1.BlockSizes, part string) error {
		n, err := blockSize(part)
		b.Align = n
		return err
	})
}

// bytesPerDir reads a per-direction byte rate (rate=, rate_min=) into
// [read, write].
func bytesPerDir(field func(*fiov1.Job) *[]uint64) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		parts, set := splitDirs(v)
		f := field(j)
		if len(*f) < 2 {
			*f = []uint64{0, 0}
		}
		for d := 0; d < 3; d++ {
			if !set[d] {
				continue
			}
			n, err := parseSize(parts[d])
			if err != nil {
				return err
			}
			if d < 2 {
				(*f)[d] = n
			}
		}
		return nil
	}
}

// setRateIops reads rate_iops=, one value or per direction.
func setRateIops(j *fiov1.Job, v string) error {
	parts, set := splitDirs(v)
	if len(j.RateIopsDir) < 2 {
		j.RateIopsDir = []uint64{0, 0}
	}
	for d := 0; d < 3; d++ {
		if !set[d] {
			continue
		}
		n, err := parseUint(parts[d], 0, math.MaxUint32)
		if err != nil {
			return err
		}
		if d < 2 {
			j.RateIopsDir[d] = n
		}
	}
	j.RateIops = max(j.RateIopsDir[0], j.RateIopsDir[1])
	return nil
}

func setRateProcess(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "linear":
		j.RateProcess = fiov1.RateProcess_RATE_PROCESS_LINEAR
	case "poisson":
		j.RateProcess = fiov1.RateProcess_RATE_PROCESS_POISSON
	default:
		return fmt.Errorf("%q: want linear or poisson", v)
	}
	return nil
}

// setDistribution reads random_distribution=: random, zipf:theta,
// pareto:h, normal:dev% (gauss), zoned:a/s:a/s..., zoned_abs:a/size:....
func setDistribution(j *fiov1.Job, v string) error {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(v), ":")
	// fio allows a center after a comma (zipf:1.2,0.5); not supported.
	if strings.Contains(arg, ",") {
		return fmt.Errorf("%q: a distribution center (,C) is not supported", v)
	}
	j.Zones = nil
	switch name {
	case "random":
		j.RandomDistribution = fiov1.Distribution_DISTRIBUTION_RANDOM
		return nil
	case "zipf", "pareto", "normal", "gauss":
		if !hasArg {
			return fmt.Errorf("%q: %s needs a parameter (%s:N)", v, name, name)
		}
		p, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return fmt.Errorf("%q: %s's parameter is not a number", v, name)
		}
		switch name {
		case "zipf":
			if p <= 0 || p == 1 {
				return fmt.Errorf("%q: zipf theta must be > 0 and not 1", v)
			}
			j.RandomDistribution = fiov1.Distribution_DISTRIBUTION_ZIPF
		case "pareto":
			if p <= 0 || p >= 1 {
				return fmt.Errorf("%q: pareto h must be in (0, 1)", v)
			}
			j.RandomDistribution = fiov1.Distribution_DISTRIBUTION_PARETO
		default:
			if p < 0 || p > 100 {
				return fmt.Errorf("%q: normal deviation must be 0..100 (percent)", v)
			}
			j.RandomDistribution = fiov1.Distribution_DISTRIBUTION_NORMAL
		}
		j.DistributionParam = p
		return nil
	case "zoned", "zoned_abs":
		return setZones(j, name == "zoned_abs", arg)
	}
	return fmt.Errorf("%q: want random, zipf:T, pareto:H, normal:D, zoned:... or zoned_abs:...", v)
}

// setZones reads zoned:access/size:... (size in percent, or bytes for
// zoned_abs); the access shares add up to 100.
func setZones(j *fiov1.Job, abs bool, arg string) error {
	j.RandomDistribution = fiov1.Distribution_DISTRIBUTION_ZONED
	if abs {
		j.RandomDistribution = fiov1.Distribution_DISTRIBUTION_ZONED_ABS
	}
	if strings.Contains(arg, ",") {
		return fmt.Errorf("%q: per-direction zones are not supported", arg)
	}
	access := uint64(0)
	for _, z := range strings.Split(arg, ":") {
		a, s, ok := strings.Cut(z, "/")
		if !ok {
			return fmt.Errorf("%q: want access%%/size", z)
		}
		ap, err := parseUint(strings.TrimSuffix(a, "%"), 0, 100)
		if err != nil {
			return err
		}
		zone := &fiov1.Zone{AccessPercent: uint32(ap)}
		if abs {
			if zone.Size, err = parseSize(s); err != nil {
				return err
			}
		} else if s == "" {
			zone.SizePercent = 0xffff // the rest of the region, as fio reads "20/"
		} else {
			sp, err := parseUint(strings.TrimSuffix(s, "%"), 0, 100)
			if err != nil {
				return err
			}
			zone.SizePercent = uint32(sp)
		}
		access += ap
		j.Zones = append(j.Zones, zone)
	}
	if access != 100 {
		return fmt.Errorf("%q: access percentages add up to %d, want 100", arg, access)
	}
	used := uint32(0)
	for _, z := range j.Zones {
		if z.SizePercent != 0xffff {
			used += z.SizePercent
		}
	}
	for _, z := range j.Zones {
		if z.SizePercent == 0xffff {
			z.SizePercent = 100 - min(used, 100)
		}
	}
	return nil
}

// setCPUsAllowed reads cpus_allowed=, a list of CPUs and ranges ("0-3,6").
func setCPUsAllowed(j *fiov1.Job, v string) error {
	j.CpusAllowed = nil
	for _, part := range strings.Split(v, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := parseUint(lo, 0, 4095)
		if err != nil {
			return err
		}
		z := a
		if isRange {
			if z, err = parseUint(hi, a, 4095); err != nil {
				return err
			}
		}
		for c := a; c <= z; c++ {
			j.CpusAllowed = append(j.CpusAllowed, uint32(c))
		}
	}
	return nil
}

// setCPUMask reads cpumask=, fio's bit mask of the CPUs a job may run on
// (bits 0 to 31, as fio's str_cpumask_cb reads an int); it sets the same
// CPU set as cpus_allowed=.
func setCPUMask(j *fiov1.Job, v string) error {
	m, err := parseCount(v, 0, math.MaxUint32)
	if err != nil {
		return err
	}
	j.CpusAllowed = nil
	for i := range 32 {
		if m&(1<<i) != 0 {
			j.CpusAllowed = append(j.CpusAllowed, uint32(i))
		}
	}
	return nil
}

func setCPUsPolicy(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "shared":
		j.CpusSplit = false
	case "split":
		j.CpusSplit = true
	default:
		return fmt.Errorf("%q: want shared or split", v)
	}
	return nil
}

// cloneCPUs are the CPUs clone index (its position among all clones)
// runs on: the job's set, or with cpus_allowed_policy=split the one fio's
// fio_cpus_split leaves, the (index mod count)-th in ascending order.
func cloneCPUs(j *fiov1.Job, index int) []uint32 {
	if !j.CpusSplit || len(j.CpusAllowed) == 0 {
		return j.CpusAllowed
	}
	set := slices.Clone(j.CpusAllowed)
	slices.Sort(set)
	set = slices.Compact(set)
	return set[index%len(set) : index%len(set)+1]
}

var verifyNames = map[string]fiov1.Verify{
	"0": fiov1.Verify_VERIFY_NONE, "null": fiov1.Verify_VERIFY_NONE, "none": fiov1.Verify_VERIFY_NONE,
	"md5": fiov1.Verify_VERIFY_MD5, "crc32c": fiov1.Verify_VERIFY_CRC32C, "crc32c-intel": fiov1.Verify_VERIFY_CRC32C,
	"crc32": fiov1.Verify_VERIFY_CRC32, "crc64": fiov1.Verify_VERIFY_CRC64, "sha1": fiov1.Verify_VERIFY_SHA1,
	"sha256": fiov1.Verify_VERIFY_SHA256, "sha512": fiov1.Verify_VERIFY_SHA512,
	"crc16": fiov1.Verify_VERIFY_CRC16, "crc7": fiov1.Verify_VERIFY_CRC7,
	"xxhash": fiov1.Verify_VERIFY_XXHASH, "meta": fiov1.Verify_VERIFY_META,
	"pattern": fiov1.Verify_VERIFY_PATTERN,
}

// setVerifyPattern reads verify_pattern= (fio's pattern syntax, %o
// allowed). Unless verify= was given, fio then verifies a header and the
// pattern after it (its VERIFY_PATTERN; verify=pattern is the headerless
// kind): here that is meta's header, then the pattern.
func setVerifyPattern(j *fiov1.Job, v string) error {
	p, offs, err := parsePattern(strings.TrimSpace(v), true)
	if err != nil {
		return err
	}
	j.VerifyPattern, j.VerifyPatternOffsets = p, offs
	if j.Verify == fiov1.Verify_VERIFY_UNSPECIFIED {
		j.Verify = fiov1.Verify_VERIFY_META
	}
	return nil
}

// setBufferPattern reads buffer_pattern= (fio's pattern syntax, no
// formats: fio does not support them there).
func setBufferPattern(j *fiov1.Job, v string) error {
	p, _, err := parsePattern(strings.TrimSpace(v), false)
	if err != nil {
		return err
	}
	j.BufferPattern = p
	return nil
}

func setVerify(j *fiov1.Job, v string) error {
	m, ok := verifyNames[strings.TrimSpace(v)]
	if !ok {
		return fmt.Errorf("%q: want md5, crc32c, crc32, crc64, crc16, crc7, sha1, sha256, sha512, xxhash, meta, pattern or null", v)
	}
	j.Verify = m
	return nil
}

// logName reads write_*_log=[prefix]; a bare flag uses the job's name, as
// fio does.
func logName(field func(*fiov1.Logs) *string) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		if v == "1" || v == "" {
			v = logJobName // the job's final name, set by finalizeJob
		}
		if v == "0" {
			v = ""
		}
		*field(logsOf(j)) = v
		return nil
	}
}

// logJobName marks a log prefix given as a bare flag.
const logJobName = "\x00job"

func logMsec(field func(*fiov1.Logs) *uint64) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		n, err := parseUint(v, 0, 1<<32)
		*field(logsOf(j)) = n
		return err
	}
}

func setUnified(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "0", "none":
		j.UnifiedRwReporting = false
	case "1", "mixed":
		j.UnifiedRwReporting = true
	default:
		return fmt.Errorf("%q: want none (0) or mixed (1); both (2) is not supported", v)
	}
	return nil
}

// setPercentiles reads percentile_list=, up to 20 values in (0, 100]
// separated by ':'.
func setPercentiles(j *fiov1.Job, v string) error {
	var out []float64
	for _, p := range strings.Split(v, ":") {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 100 {
			return fmt.Errorf("%q: want percentiles between 0 and 100 separated by ':'", v)
		}
		out = append(out, f)
	}
	if len(out) > 20 {
		return fmt.Errorf("%q: at most 20 percentiles (fio's FIO_IO_U_LIST_MAX_LEN)", v)
	}
	j.PercentileList = out
	j.ClatPercentiles = j.ClatPercentiles || !j.LatPercentiles
	return nil
}

// setRandomGenerator accepts fio's generators: the offsets differ from
// fio's in any case (writepath draws with PCG), and with the random map
// every block is covered once per loop, which is what lfsr guarantees.
func setRandomGenerator(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "tausworthe", "tausworthe64":
		j.RandomLfsr = false
		return nil
	case "lfsr":
		j.RandomLfsr = true
		return nil
	}
	return fmt.Errorf("%q: want tausworthe, lfsr or tausworthe64", v)
}

// setGtodReduce is fio's gtod_reduce=1: no latencies, bandwidth samples
// or percentiles (options given after it can turn one back on).
func setGtodReduce(j *fiov1.Job, v string) error {
	b, err := parseBool(v)
	if err != nil || !b {
		return err
	}
	j.DisableLat, j.DisableClat, j.DisableSlat, j.DisableBw = true, true, true, true
	j.ClatPercentiles, j.LatPercentiles, j.SlatPercentiles = false, false, false
	return nil
}

// usecOpt reads a time whose bare number is microseconds (fio's
// thinktime, thinktime_spin).
func usecOpt(set func(*fiov1.Job, int64)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		d, err := parseTimeIn(v, time.Microsecond)
		if err != nil {
			return err
		}
		set(j, int64(d))
		return nil
	}
}

func setExitWhat(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "group":
		j.ExitWhat = exitGroup
	case "stonewall":
		j.ExitWhat = exitRunning
	case "all":
		j.ExitWhat = exitAll
	default:
		return fmt.Errorf("%q: want group, stonewall or all", v)
	}
	return nil
}

// exit_what values.
const (
	exitGroup   = 0 // the jobs of the finished job's group
	exitRunning = 1 // every job running (fio's stonewall)
	exitAll     = 2 // every job, started or not
)

// zonemode= values (Job.zone_mode).
const (
	zoneNone    = 0 // fio 3.33's default
	zoneStrided = 2
	zoneZbd     = 3
)

// setZoneMode reads zonemode=: none, strided, or zbd (zoned block
// devices: refused when run).
func setZoneMode(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "none":
		j.ZoneMode = zoneNone
	case "strided":
		j.ZoneMode = zoneStrided
	case "zbd":
		j.ZoneMode = zoneZbd
		return runRefusal(refused["zonemode"])
	default:
		return fmt.Errorf("%q: want none, strided or zbd", v)
	}
	return nil
}
