package blocktrace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sysBlock is where the kernel lists block devices by name and by number.
const sysBlock = "/sys/class/block"

// minorBits is the kernel's dev_t split (MINORBITS): the block tracepoints
// see a disk as major<<20 | minor, not the user-space encoding.
const minorBits = 20

// kdev is a kernel dev_t.
func kdev(major, minor uint32) uint32 { return major<<minorBits | minor }

// disk is a whole disk: block requests are issued to it, never to a
// partition.
type disk struct {
	name string
	dev  uint32 // kernel dev_t
}

// diskOf resolves a device name (a disk or a partition, as /proc/diskstats
// names it) to the disk its requests go to, and a partition's first sector
// on that disk.
func diskOf(sys, name string) (disk, uint64, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return disk{}, 0, fmt.Errorf("device %q: not a block device name", name)
	}
	dir := filepath.Join(sys, name)
	var start uint64
	if b, err := os.ReadFile(filepath.Join(dir, "partition")); err == nil && len(b) > 0 {
		s, err := readUint(filepath.Join(dir, "start"))
		if err != nil {
			return disk{}, 0, fmt.Errorf("partition %s: %w", name, err)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return disk{}, 0, fmt.Errorf("partition %s: %w", name, err)
		}
		start, name, dir = s, filepath.Base(filepath.Dir(real)), filepath.Dir(real)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dev"))
	if err != nil {
		return disk{}, 0, fmt.Errorf("device %s: %w", name, err)
	}
	maj, min, err := parseDev(strings.TrimSpace(string(b)))
	if err != nil {
		return disk{}, 0, fmt.Errorf("device %s: %w", name, err)
	}
	return disk{name: name, dev: kdev(maj, min)}, start, nil
}

// nameOfDev names a kernel dev_t through /sys/dev/block (a device the
// tracer was not told about: tracing every device).
func nameOfDev(sys string, dev uint32) string {
	p := filepath.Join(filepath.Dir(filepath.Dir(sys)), "dev", "block", fmt.Sprintf("%d:%d", dev>>minorBits, dev&(1<<minorBits-1)))
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return filepath.Base(real)
	}
	return fmt.Sprintf("%d-%d", dev>>minorBits, dev&(1<<minorBits-1))
}

func parseDev(s string) (uint32, uint32, error) {
	a, b, ok := strings.Cut(s, ":")
	maj, err1 := strconv.ParseUint(a, 10, 12)
	min, err2 := strconv.ParseUint(b, 10, minorBits)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("dev %q: want MAJOR:MINOR", s)
	}
	return uint32(maj), uint32(min), nil
}

func readUint(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}
