package fio

import (
	"fmt"
	"math"
	"sort"
	"strings"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// option is one supported fio job option: how to apply its value to a Job.
type option struct {
	// flag options may be given without a value, meaning "1".
	flag  bool
	apply func(j *fiov1.Job, v string) error
}

// options is the supported set, by fio name (aliases included). Anything
// else is ErrUnknownOption: an ignored option would silently change what
// is measured.
var options = map[string]option{
	"name":            {apply: func(j *fiov1.Job, v string) error { j.Name = v; return nil }},
	"filename":        {apply: setFilename},
	"directory":       {apply: func(j *fiov1.Job, v string) error { j.Directory = v; return nil }},
	"rw":              {apply: setRW},
	"readwrite":       {apply: setRW},
	"rwmixread":       {apply: uintOpt(0, 100, func(j *fiov1.Job, n uint64) { j.Rwmixread = uint32(n) })},
	"rwmixwrite":      {apply: uintOpt(0, 100, func(j *fiov1.Job, n uint64) { j.Rwmixread = uint32(100 - n) })},
	"bs":              {apply: setBS},
	"blocksize":       {apply: setBS},
	"size":            {apply: sizeOpt(func(j *fiov1.Job, n uint64) { j.Size = n })},
	"offset":          {apply: sizeOpt(func(j *fiov1.Job, n uint64) { j.Offset = n })},
	"numjobs":         {apply: uintOpt(1, 1<<16, func(j *fiov1.Job, n uint64) { j.Numjobs = uint32(n) })},
	"iodepth":         {apply: uintOpt(1, 1<<16, func(j *fiov1.Job, n uint64) { j.Iodepth = uint32(n) })},
	"ioengine":        {apply: setEngine},
	"direct":          {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.Direct = b })},
	"buffered":        {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.Direct = !b })},
	"sync":            {flag: true, apply: setSync},
	"fsync":           {apply: uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.Fsync = uint32(n) })},
	"fdatasync":       {apply: uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.Fdatasync = uint32(n) })},
	"end_fsync":       {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.EndFsync = b })},
	"runtime":         {apply: timeOpt(func(j *fiov1.Job, ns int64) { j.RuntimeNs = ns })},
	"time_based":      {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.TimeBased = b })},
	"ramp_time":       {apply: timeOpt(func(j *fiov1.Job, ns int64) { j.RampTimeNs = ns })},
	"startdelay":      {apply: timeOpt(func(j *fiov1.Job, ns int64) { j.StartdelayNs = ns })},
	"rate_iops":       {apply: uintOpt(0, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.RateIops = n })},
	"randrepeat":      {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.Randrepeat = b })},
	"randseed":        {apply: uintOpt(0, math.MaxUint64, func(j *fiov1.Job, n uint64) { j.Randseed = n })},
	"norandommap":     {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.Norandommap = b })},
	"fallocate":       {apply: setFallocate},
	"overwrite":       {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.Overwrite = b })},
	"group_reporting": {flag: true, apply: boolOpt(func(j *fiov1.Job, b bool) { j.GroupReporting = b })},
	"loops":           {apply: uintOpt(1, math.MaxUint32, func(j *fiov1.Job, n uint64) { j.Loops = uint32(n) })},
}

// supportedNames lists the option names for error messages.
func supportedNames() string {
	names := make([]string, 0, len(options)+2)
	for n := range options {
		names = append(names, n)
	}
	names = append(names, "output-format", "output")
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// defaultJob returns a Job with fio 3.33's defaults for the supported set.
func defaultJob() *fiov1.Job {
	return &fiov1.Job{
		Rw:         fiov1.ReadWrite_READ_WRITE_READ,
		Rwmixread:  50,
		Bs:         4096,
		Numjobs:    1,
		Iodepth:    1,
		Ioengine:   fiov1.IOEngine_IO_ENGINE_PSYNC,
		Sync:       fiov1.SyncMode_SYNC_MODE_NONE,
		Randrepeat: true,
		Randseed:   0x89,
		Fallocate:  fiov1.Fallocate_FALLOCATE_NATIVE,
		Loops:      1,
	}
}

func uintOpt(lo, hi uint64, set func(*fiov1.Job, uint64)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		n, err := parseUint(v, lo, hi)
		if err != nil {
			return err
		}
		set(j, n)
		return nil
	}
}

func sizeOpt(set func(*fiov1.Job, uint64)) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		if strings.HasSuffix(strings.TrimSpace(v), "%") {
			return fmt.Errorf("%q: percentage sizes are not supported; give bytes (e.g. 1G)", v)
		}
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		set(j, n)
		return nil
	}
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

func setBS(j *fiov1.Job, v string) error {
	if strings.ContainsAny(v, ",:-") {
		return fmt.Errorf("%q: per-direction and ranged block sizes are not supported; give one size", v)
	}
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	if n == 0 || n > 1<<30 {
		return fmt.Errorf("%q: block size must be between 1 byte and 1g", v)
	}
	j.Bs = n
	return nil
}

func setFilename(j *fiov1.Job, v string) error {
	if strings.Contains(v, ":") {
		return fmt.Errorf("%q: several files per job are not supported; give one file", v)
	}
	j.Filename = v
	return nil
}

var rwNames = map[string]fiov1.ReadWrite{
	"read": fiov1.ReadWrite_READ_WRITE_READ, "write": fiov1.ReadWrite_READ_WRITE_WRITE,
	"randread": fiov1.ReadWrite_READ_WRITE_RANDREAD, "randwrite": fiov1.ReadWrite_READ_WRITE_RANDWRITE,
	"rw": fiov1.ReadWrite_READ_WRITE_RW, "readwrite": fiov1.ReadWrite_READ_WRITE_RW,
	"randrw": fiov1.ReadWrite_READ_WRITE_RANDRW,
}

func setRW(j *fiov1.Job, v string) error {
	rw, ok := rwNames[strings.TrimSpace(v)]
	if !ok {
		return fmt.Errorf("%q: want read, write, randread, randwrite, rw, readwrite or randrw", v)
	}
	j.Rw = rw
	return nil
}

var engineNames = map[string]fiov1.IOEngine{
	"psync": fiov1.IOEngine_IO_ENGINE_PSYNC, "sync": fiov1.IOEngine_IO_ENGINE_SYNC,
	"pvsync": fiov1.IOEngine_IO_ENGINE_PVSYNC, "libaio": fiov1.IOEngine_IO_ENGINE_LIBAIO,
	"io_uring": fiov1.IOEngine_IO_ENGINE_IO_URING,
}

func setEngine(j *fiov1.Job, v string) error {
	e, ok := engineNames[strings.TrimSpace(v)]
	if !ok {
		return fmt.Errorf("%q: want psync, sync, pvsync, libaio or io_uring", v)
	}
	j.Ioengine = e
	return nil
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
