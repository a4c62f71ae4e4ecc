package diskstats

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Device is a block device to sample, as /proc/diskstats names it.
type Device struct {
	// Name is the kernel name: the whole disk ("nvme0n1", "sda") for a path
	// on a partition, or the device-mapper/md device itself ("dm-0", "md0").
	Name         string
	Major, Minor uint32
	// Partition is the partition a resolved path lives on ("nvme0n1p2").
	Partition string
	// Slaves are the whole disks under a dm or md device, leaves first
	// found; empty for plain disks.
	Slaves []string
	// Paths are the requested paths that resolved to this device.
	Paths []string
}

// Resolver maps paths and names to block devices through the mount table
// and sysfs. The zero value is not usable; tests point it at fake trees.
type Resolver struct {
	// SysDir is the sysfs mount ("/sys").
	SysDir string
	// MountInfo is the mount table to use ("/proc/self/mountinfo").
	MountInfo string
}

// DefaultResolver reads the running system.
func DefaultResolver() Resolver {
	return Resolver{SysDir: "/sys", MountInfo: "/proc/self/mountinfo"}
}

// Paths resolves files or directories to the whole disks (or dm/md
// devices) behind them, one Device per distinct device, in first-seen order.
func (r Resolver) Paths(paths ...string) ([]Device, error) {
	mounts, err := r.Mounts()
	if err != nil {
		return nil, err
	}
	var out []Device
	for _, p := range paths {
		d, err := r.path(mounts, p)
		if err != nil {
			return nil, err
		}
		out = mergeDevice(out, d)
	}
	return out, nil
}

// Names resolves explicit device names ("sda", "nvme0n1p2", "dm-0") or
// device nodes ("/dev/sda", "/dev/mapper/vg-data") to devices. Unlike
// Paths, a partition named explicitly stays a partition.
func (r Resolver) Names(names ...string) ([]Device, error) {
	var out []Device
	for _, n := range names {
		d, err := r.name(n)
		if err != nil {
			return nil, err
		}
		out = mergeDevice(out, d)
	}
	return out, nil
}

// Number resolves a major:minor pair (st_dev of a file, or a mount's
// numbers) to its whole disk (or dm/md device), like Paths.
func (r Resolver) Number(major, minor uint32) (Device, error) { return r.disk(major, minor) }

// Mounts reads the resolver's mount table.
func (r Resolver) Mounts() ([]Mount, error) {
	f, err := os.Open(r.MountInfo)
	if err != nil {
		return nil, fmt.Errorf("mount table: %w", err)
	}
	defer f.Close()
	m, err := ParseMountInfo(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.MountInfo, err)
	}
	return m, nil
}

// MountOf returns the mount that holds path.
func (r Resolver) MountOf(path string) (Mount, error) {
	mounts, err := r.Mounts()
	if err != nil {
		return Mount{}, err
	}
	real, err := realPath(path)
	if err != nil {
		return Mount{}, err
	}
	m, ok := mountFor(mounts, real)
	if !ok {
		return Mount{}, fmt.Errorf("path %s: not under any mount in %s", path, r.MountInfo)
	}
	return m, nil
}

// path resolves one path: st_dev of the file if sysfs knows it, else the
// mount's major:minor, else the mount source's device node.
func (r Resolver) path(mounts []Mount, p string) (Device, error) {
	real, err := realPath(p)
	if err != nil {
		return Device{}, err
	}
	m, ok := mountFor(mounts, real)
	if !ok {
		return Device{}, fmt.Errorf("path %s: not under any mount in %s", p, r.MountInfo)
	}
	for _, mm := range r.candidates(real, m) {
		if r.known(mm[0], mm[1]) {
			d, err := r.disk(mm[0], mm[1])
			d.Paths = []string{p}
			return d, err
		}
	}
	return Device{}, fmt.Errorf("path %s is on %s %s mounted at %s: %w", p, m.FSType, m.Source, m.MountPoint, ErrNoBlockDevice)
}

// candidates lists the major:minor pairs that may identify real's device,
// most specific first.
func (r Resolver) candidates(real string, m Mount) [][2]uint32 {
	var out [][2]uint32
	if maj, min, err := statDev(real); err == nil {
		out = append(out, [2]uint32{maj, min})
	}
	out = append(out, [2]uint32{m.Major, m.Minor})
	if strings.HasPrefix(m.Source, "/dev/") {
		if maj, min, err := statRdev(m.Source); err == nil {
			out = append(out, [2]uint32{maj, min})
		}
	}
	return out
}

// known reports whether sysfs has a block device major:minor.
func (r Resolver) known(major, minor uint32) bool {
	_, err := os.Lstat(r.devLink(major, minor))
	return major != 0 && err == nil
}

func (r Resolver) devLink(major, minor uint32) string {
	return filepath.Join(r.SysDir, "dev", "block", fmt.Sprintf("%d:%d", major, minor))
}

// disk maps major:minor to its whole disk: a partition's sysfs directory
// sits inside its disk's (…/block/sda/sda2) and holds a "partition" file.
func (r Resolver) disk(major, minor uint32) (Device, error) {
	link := r.devLink(major, minor)
	target, err := os.Readlink(link)
	if err != nil {
		return Device{}, fmt.Errorf("block device %d:%d: %w", major, minor, ErrNoDevice)
	}
	name := filepath.Base(target)
	if _, err := os.Stat(filepath.Join(link, "partition")); err != nil {
		return r.named(name, major, minor)
	}
	parent := filepath.Base(filepath.Dir(target))
	pmaj, pmin, err := r.sysDev(parent)
	if err != nil {
		return Device{}, err
	}
	d, err := r.named(parent, pmaj, pmin)
	d.Partition = diskstatsName(name)
	return d, err
}

// named builds the Device for a sysfs name, with its slaves.
func (r Resolver) named(name string, major, minor uint32) (Device, error) {
	slaves, err := r.slaves(name, 0)
	if err != nil {
		return Device{}, err
	}
	return Device{Name: diskstatsName(name), Major: major, Minor: minor, Slaves: slaves}, nil
}

// slaves lists the whole disks under a stacked device, recursively (LVM on
// LUKS on a partition ends at the disk).
func (r Resolver) slaves(name string, depth int) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(r.SysDir, "class", "block", name, "slaves"))
	if errors.Is(err, fs.ErrNotExist) || depth > 8 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("slaves of %s: %w", name, err)
	}
	var out []string
	for _, e := range entries {
		leaves, err := r.slaveLeaves(e.Name(), depth)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, leaves...)
	}
	return out, nil
}

// slaveLeaves resolves one slave to the whole disks at the bottom.
func (r Resolver) slaveLeaves(name string, depth int) ([]string, error) {
	maj, min, err := r.sysDev(name)
	if err != nil {
		return nil, err
	}
	d, err := r.disk(maj, min)
	if err != nil {
		return nil, err
	}
	below, err := r.slaves(strings.ReplaceAll(d.Name, "/", "!"), depth+1)
	if err != nil || len(below) == 0 {
		return []string{d.Name}, err
	}
	return below, nil
}

// sysDev reads /sys/class/block/<name>/dev ("8:0").
func (r Resolver) sysDev(name string) (uint32, uint32, error) {
	b, err := os.ReadFile(filepath.Join(r.SysDir, "class", "block", name, "dev"))
	if err != nil {
		return 0, 0, fmt.Errorf("block device %s: %w", name, ErrNoDevice)
	}
	return parseMajorMinor(string(b))
}

// name resolves an explicit name or device node without promoting
// partitions.
func (r Resolver) name(n string) (Device, error) {
	var maj, min uint32
	var err error
	if strings.HasPrefix(n, "/") {
		maj, min, err = statRdev(n)
	} else {
		maj, min, err = r.sysDev(strings.ReplaceAll(n, "/", "!"))
	}
	if err != nil {
		return Device{}, fmt.Errorf("device %s: %w", n, err)
	}
	target, err := os.Readlink(r.devLink(maj, min))
	if err != nil {
		return Device{}, fmt.Errorf("device %s (%d:%d): %w", n, maj, min, ErrNoDevice)
	}
	return r.named(filepath.Base(target), maj, min)
}

// diskstatsName maps a sysfs name to its /proc/diskstats spelling: sysfs
// replaces '/' in disk names with '!' ("cciss!c0d0").
func diskstatsName(sysName string) string { return strings.ReplaceAll(sysName, "!", "/") }

// realPath makes p absolute with symlinks resolved; a path that does not
// exist yet resolves through its nearest existing parent.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", p, err)
	}
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || abs == "/" {
			return "", fmt.Errorf("path %s: %w", p, err)
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = filepath.Dir(abs)
	}
}

// mergeDevice adds d to list, or its paths to the entry of the same name.
func mergeDevice(list []Device, d Device) []Device {
	for i := range list {
		if list[i].Name == d.Name {
			list[i].Paths = appendNew(list[i].Paths, d.Paths...)
			return list
		}
	}
	return append(list, d)
}

// appendNew appends the items of add not yet in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		found := false
		for _, l := range list {
			found = found || l == a
		}
		if !found {
			list = append(list, a)
		}
	}
	return list
}

// DeviceNames returns the names to sample for devs: each device, and with
// slaves also the disks under dm/md devices, without repeats.
func DeviceNames(devs []Device, slaves bool) []string {
	var out []string
	for _, d := range devs {
		out = appendNew(out, d.Name)
		if slaves {
			out = appendNew(out, d.Slaves...)
		}
	}
	return out
}
