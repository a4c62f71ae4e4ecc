package blockdev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Info is a block device's queue settings and identity. Sizes are bytes.
type Info struct {
	// Name is the device probed ("nvme0n1"); Disk is the device owning the
	// queue (the same, or the parent of a partition).
	Name, Disk string
	// LogicalBlockSize is the smallest unit the device addresses (512 or
	// 4096); PhysicalBlockSize the unit it writes without read-modify-write.
	LogicalBlockSize, PhysicalBlockSize int64
	// MinIOSize and OptimalIOSize are the device's preferred minimum and
	// optimal request sizes (0 when it reports none).
	MinIOSize, OptimalIOSize int64
	// Scheduler is the active I/O scheduler ("none", "mq-deadline");
	// Schedulers lists every choice the kernel offers.
	Scheduler  string
	Schedulers []string
	// NrRequests is the queue depth the block layer allows per queue.
	NrRequests int
	// Rotational is the kernel's guess that the device spins; virtual disks
	// often claim it wrongly.
	Rotational bool
	// WriteCache is "write back" (volatile cache, needs flushes) or "write
	// through".
	WriteCache string
	// NoMerges is 0 (merges on), 1 (only simple one-hit merges) or 2 (off).
	NoMerges int
	// MaxSectorsKB is the largest request the block layer builds (KiB).
	MaxSectorsKB int64
	// Model and Vendor identify the hardware, when the driver says.
	Model, Vendor string
}

// NVMe reports whether the device is an NVMe namespace.
func (i Info) NVMe() bool { return strings.HasPrefix(i.Disk, "nvme") }

// Prober reads sysfs under SysDir ("/sys"; tests use a fake tree).
type Prober struct{ SysDir string }

// Probe reads the running system's sysfs.
func Probe(name string) (Info, error) { return Prober{SysDir: "/sys"}.Probe(name) }

// Probe reads the settings of the device called name ("sda", "nvme0n1p2",
// "dm-0"; "cciss/c0d0" is accepted for sysfs's "cciss!c0d0").
func (p Prober) Probe(name string) (Info, error) {
	sysName := strings.ReplaceAll(strings.TrimPrefix(name, "/dev/"), "/", "!")
	dir := filepath.Join(p.SysDir, "class", "block", sysName)
	if _, err := os.Stat(dir); err != nil {
		return Info{}, fmt.Errorf("block device %s: %w", name, ErrNoDevice)
	}
	disk := sysName
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return Info{}, fmt.Errorf("block device %s: %w", name, err)
		}
		disk = filepath.Base(filepath.Dir(real))
	}
	info := Info{Name: strings.ReplaceAll(sysName, "!", "/"), Disk: strings.ReplaceAll(disk, "!", "/")}
	r := reader{dir: filepath.Join(p.SysDir, "class", "block", disk)}
	r.queue(&info)
	r.identity(&info)
	if r.err != nil {
		return Info{}, fmt.Errorf("block device %s: %w", name, r.err)
	}
	return info, nil
}

// reader reads attribute files below dir, keeping the first error.
type reader struct {
	dir string
	err error
}

// queue reads the request queue's attributes.
func (r *reader) queue(info *Info) {
	info.LogicalBlockSize = r.int("queue/logical_block_size", true)
	info.PhysicalBlockSize = r.int("queue/physical_block_size", true)
	info.MinIOSize = r.int("queue/minimum_io_size", false)
	info.OptimalIOSize = r.int("queue/optimal_io_size", false)
	info.Scheduler, info.Schedulers = ParseScheduler(r.str("queue/scheduler", false))
	info.NrRequests = int(r.int("queue/nr_requests", false))
	info.Rotational = r.int("queue/rotational", false) == 1
	info.WriteCache = r.str("queue/write_cache", false)
	info.NoMerges = int(r.int("queue/nomerges", false))
	info.MaxSectorsKB = r.int("queue/max_sectors_kb", false)
}

// identity reads the model and vendor the driver exposes, if any.
func (r *reader) identity(info *Info) {
	info.Model = r.str("device/model", false)
	info.Vendor = r.str("device/vendor", false)
}

// str reads one attribute, trimmed; a missing optional one is "".
func (r *reader) str(rel string, required bool) string {
	b, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		if required || !errors.Is(err, fs.ErrNotExist) {
			r.fail(fmt.Errorf("read %s: %w", rel, err))
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}

// int reads one integer attribute; a missing optional one is 0.
func (r *reader) int(rel string, required bool) int64 {
	s := r.str(rel, required)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.fail(fmt.Errorf("%s = %q: not an integer", rel, s))
	}
	return v
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// ParseScheduler parses queue/scheduler: the choices separated by spaces,
// the active one in brackets ("none [mq-deadline] kyber bfq"). A single
// choice may come without brackets ("none" on dm devices).
func ParseScheduler(s string) (active string, choices []string) {
	for _, f := range strings.Fields(s) {
		name := strings.Trim(f, "[]")
		if name != f {
			active = name
		}
		choices = append(choices, name)
	}
	if active == "" && len(choices) == 1 {
		active = choices[0]
	}
	return active, choices
}
