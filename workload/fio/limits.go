package fio

import (
	"fmt"
	"math"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// Limits of a spec, checked by New on the worker as on the CLI: a raw spec
// (one sent to the coordinator without the CLI) cannot ask for more.
const (
	// MaxJobs bounds job sections and clones in all (fio's own limit of
	// jobs, REAL_MAX_JOBS): each clone is an OS thread.
	MaxJobs = 4096
	// maxDepth and maxNumjobs are the parser's bounds of iodepth and
	// numjobs.
	maxDepth, maxNumjobs = 1 << 16, 1 << 16
	// maxBS is the parser's bound of a block size.
	maxBS = 1 << 30
	// maxFiles bounds nrfiles (each an open file per clone), and
	// maxSpecFiles the files of all clones together.
	maxFiles     = 1 << 16
	maxSpecFiles = 1 << 20
)

// layoutBuffer is the most the layout of one file holds at a time (it
// writes whole bs multiples of about 1 MiB; clones are laid out one by
// one).
const layoutBuffer = 1 << 20

// checkLimits reports every bound a spec exceeds: job and clone counts,
// per-job depths, block sizes and file counts, offset+size overflow, and
// what any spec must hold (enums defined, strings short and NUL-free,
// lists bounded: workload.CheckSpec). The worker's buffer budget is a
// Check (bufferMemory against the guard's --max-job-memory).
func checkLimits(spec *fiov1.Spec) []error {
	if n := len(spec.GetJobs()); n > MaxJobs {
		// Nothing else is looked at: a spec this size costs no more.
		return []error{fmt.Errorf("fio spec: %d jobs; at most %d (fio's limit of jobs)", n, MaxJobs)}
	}
	errs := []error{workload.CheckSpec(spec)}
	clones, files := 0, 0
	for _, j := range spec.GetJobs() {
		clones += int(j.GetNumjobs())
		files += int(j.GetNumjobs()) * fileCount(j)
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("job %s: %w: %s", j.GetName(), ErrInvalidValue, fmt.Sprintf(format, a...)))
		}
		if j.GetNumjobs() > maxNumjobs {
			bad("numjobs=%d: at most %d", j.GetNumjobs(), maxNumjobs)
		}
		if j.GetIodepth() > maxDepth {
			bad("iodepth=%d: at most %d", j.GetIodepth(), maxDepth)
		}
		for _, b := range []uint64{j.GetBs(), j.GetReadBs().GetMax(), j.GetWriteBs().GetMax(), j.GetReadBs().GetMin(), j.GetWriteBs().GetMin()} {
			if b > maxBS {
				bad("block size %d: at most 1g", b)
				break
			}
		}
		if j.GetNrfiles() > maxFiles || len(j.GetFilenames()) > maxFiles {
			bad("%d files: at most %d per job", max(int(j.GetNrfiles()), len(j.GetFilenames())), maxFiles)
		}
		if p := j.GetFileServiceParam(); math.IsNaN(p) || math.IsInf(p, 0) || math.IsNaN(j.GetFileServiceCenter()) || j.GetFileServiceCenter() < 0 || j.GetFileServiceCenter() > 1 {
			bad("file_service_type's value %g and center %g: want finite numbers, the center in 0..1", p, j.GetFileServiceCenter())
		}
		if j.GetOffsetIncrement() > 0 && j.GetNumjobs() > 0 && j.GetOffsetIncrement() > (math.MaxUint64-j.GetOffset()-j.GetSize())/uint64(j.GetNumjobs()) {
			bad("offset_increment=%d over %d clones: past 2^64 bytes", j.GetOffsetIncrement(), j.GetNumjobs())
		}
		if j.GetOffset()+j.GetSize() < j.GetOffset() || j.GetOffset()+j.GetFilesize() < j.GetOffset() {
			bad("offset=%d + size: past 2^64 bytes", j.GetOffset())
		}
		if j.GetRuntimeNs() < 0 || j.GetRampTimeNs() < 0 || j.GetStartdelayNs() < 0 {
			bad("runtime, ramp_time and startdelay must not be negative")
		}
	}
	if files > maxSpecFiles {
		errs = append(errs, fmt.Errorf("fio spec: %d files (numjobs times the files of each job, summed); at most %d", files, maxSpecFiles))
	}
	if clones > MaxJobs {
		errs = append(errs, fmt.Errorf("fio spec: %d clones (numjobs summed); at most %d (fio's limit of jobs)", clones, MaxJobs))
	}
	return errs
}

// bufferMemory is what a spec's clones hold in I/O buffers at once: for
// every clone iodepth buffers of bs bytes (one for the synchronous
// engines), page rounded, plus one layout buffer. Saturates instead of
// overflowing.
func bufferMemory(spec *fiov1.Spec) int64 {
	const page = 4096
	var total, maxBs uint64
	for _, j := range spec.GetJobs() {
		depth := uint64(1)
		if j.GetIoengine() == fiov1.IOEngine_IO_ENGINE_LIBAIO || j.GetIoengine() == fiov1.IOEngine_IO_ENGINE_IO_URING {
			depth = uint64(j.GetIodepth())
		}
		bs := (min(j.GetBs(), 1<<40) + page - 1) / page * page
		maxBs = max(maxBs, bs)
		total = satAdd(total, satMul(satMul(depth, bs), uint64(j.GetNumjobs())))
	}
	total = satAdd(total, max(maxBs, layoutBuffer))
	return int64(min(total, 1<<62))
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

func satAdd(a, b uint64) uint64 {
	if a+b < a || a+b > 1<<62 {
		return 1 << 62
	}
	return a + b
}
