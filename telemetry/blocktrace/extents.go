package blocktrace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxExtents is how many extents the programs compare a request with
// (MAX_EXTENTS in trace.bpf.c); a file in more pieces is counted on its
// first maxExtents, and Extents says so.
const maxExtents = 64

// extent is a range of 512-byte sectors on a disk, [start, end).
type extent struct{ start, end uint64 }

// Extents are where a set of files lies on one disk.
type Extents struct {
	Disk      string
	dev       uint32
	ranges    []extent
	Truncated bool // more than maxExtents ranges: only the first are watched
}

// FIEMAP, from linux/fiemap.h and linux/fs.h.
const (
	fsIocFiemap       = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync    = 0x1
	fiemapExtentLast  = 0x1
	fiemapExtentNoPhy = 0x2 | 0x4 | 0x200 // unknown, delalloc, inline: no sectors of their own
	fiemapHeaderLen   = 32
	fiemapExtentLen   = 56
	fiemapBatch       = 128
)

// FileExtents maps files through FIEMAP onto the disk their filesystem
// lies on (a partition's offset added), coalesced and sorted. Files on
// another disk than the first are an error: the programs watch one disk.
func FileExtents(files []string) (*Extents, error) {
	return fileExtents(sysBlock, files)
}

func fileExtents(sys string, files []string) (*Extents, error) {
	var out *Extents
	var ranges []extent
	for _, f := range files {
		d, start, rs, err := fileRanges(sys, f)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = &Extents{Disk: d.name, dev: d.dev}
		} else if out.dev != d.dev {
			return nil, fmt.Errorf("extents of %s: on %s, not %s like %s", f, d.name, out.Disk, files[0])
		}
		for _, r := range rs {
			ranges = append(ranges, extent{start + r.start, start + r.end})
		}
	}
	if out == nil {
		return nil, errors.New("extents: no files")
	}
	out.ranges = coalesce(ranges)
	if len(out.ranges) > maxExtents {
		out.ranges, out.Truncated = out.ranges[:maxExtents], true
	}
	return out, nil
}

// fileRanges returns a file's disk, its partition's start and its extents
// in sectors relative to that partition.
func fileRanges(sys, path string) (disk, uint64, []extent, error) {
	f, err := os.Open(path)
	if err != nil {
		return disk{}, 0, nil, fmt.Errorf("extents of %s: %w", path, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return disk{}, 0, nil, fmt.Errorf("extents of %s: %w", path, err)
	}
	name := filepath.Base(nameOfDev(sys, kdev(unix.Major(st.Dev), unix.Minor(st.Dev))))
	d, start, err := diskOf(sys, name)
	if err != nil {
		return disk{}, 0, nil, fmt.Errorf("extents of %s: %w", path, err)
	}
	rs, err := fiemap(int(f.Fd()))
	if err != nil {
		return disk{}, 0, nil, fmt.Errorf("extents of %s: FIEMAP: %w", path, err)
	}
	return d, start, rs, nil
}

// fiemap returns a file's extents with a physical place, in sectors.
func fiemap(fd int) ([]extent, error) {
	buf := make([]byte, fiemapHeaderLen+fiemapBatch*fiemapExtentLen)
	var out []extent
	var from uint64
	for {
		clear(buf)
		*(*uint64)(unsafe.Pointer(&buf[0])) = from       // fm_start
		*(*uint64)(unsafe.Pointer(&buf[8])) = ^uint64(0) // fm_length
		*(*uint32)(unsafe.Pointer(&buf[16])) = fiemapFlagSync
		*(*uint32)(unsafe.Pointer(&buf[24])) = fiemapBatch // fm_extent_count
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
			return nil, e
		}
		n := *(*uint32)(unsafe.Pointer(&buf[20])) // fm_mapped_extents
		if n == 0 {
			return out, nil
		}
		last := false
		for i := range int(n) {
			e := buf[fiemapHeaderLen+i*fiemapExtentLen:]
			logical := *(*uint64)(unsafe.Pointer(&e[0]))
			physical := *(*uint64)(unsafe.Pointer(&e[8]))
			length := *(*uint64)(unsafe.Pointer(&e[16]))
			flags := *(*uint32)(unsafe.Pointer(&e[40]))
			if flags&fiemapExtentNoPhy == 0 && length > 0 {
				out = append(out, extent{physical / 512, (physical + length + 511) / 512})
			}
			from = logical + length
			last = last || flags&fiemapExtentLast != 0
		}
		if last {
			return out, nil
		}
	}
}

func coalesce(rs []extent) []extent {
	slices.SortFunc(rs, func(a, b extent) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	var out []extent
	for _, r := range rs {
		if n := len(out); n > 0 && r.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Sectors is how many sectors the extents cover.
func (e *Extents) Sectors() uint64 {
	var n uint64
	for _, r := range e.ranges {
		n += r.end - r.start
	}
	return n
}
