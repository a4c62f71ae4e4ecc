package diskprofile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hostknob"
)

// Throttle files of cgroup v1's blkio controller, in the order a cap is
// written and restored.
var v1Files = []string{
	"blkio.throttle.write_iops_device", "blkio.throttle.read_iops_device",
	"blkio.throttle.write_bps_device", "blkio.throttle.read_bps_device",
}

// throttler writes a device's caps where the kernel enforces them.
type throttler interface {
	// changes are the journal entries that put the device back.
	changes(dev string) ([]hostknob.Change, error)
	// set writes a cap (zero fields uncapped).
	set(dev string, c Cap) error
	// describe names the mechanism for messages and telemetry.
	describe() string
}

// cgroups is what the host's cgroup mounts offer.
type cgroups struct {
	blkio   string // cgroup v1 blkio hierarchy's mount point; "" without
	unified string // cgroup2 mount point; "" without
	ioV2    bool   // the io controller is on the v2 hierarchy
	// self is this process's blkio cgroup path (v1).
	self string
}

// probeCgroups reads mountinfo and /proc/self/cgroup.
func probeCgroups(mountInfo, selfCgroup string) (cgroups, error) {
	var cg cgroups
	f, err := os.Open(mountInfo)
	if err != nil {
		return cg, fmt.Errorf("cgroups: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, pf := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(pf) < 3 || fields[3] != "/" {
			continue
		}
		switch {
		case pf[0] == "cgroup" && contains(strings.Split(pf[2], ","), "blkio") && cg.blkio == "":
			cg.blkio = unescape(fields[4])
		case pf[0] == "cgroup2" && cg.unified == "":
			cg.unified = unescape(fields[4])
		}
	}
	if err := sc.Err(); err != nil {
		return cg, fmt.Errorf("cgroups: %w", err)
	}
	if cg.unified != "" {
		b, _ := os.ReadFile(filepath.Join(cg.unified, "cgroup.controllers"))
		cg.ioV2 = contains(strings.Fields(string(b)), "io")
	}
	if b, err := os.ReadFile(selfCgroup); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) == 3 && contains(strings.Split(parts[1], ","), "blkio") {
				cg.self = parts[2]
			}
		}
	}
	return cg, nil
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// throttler picks the kernel's mechanism, or says why there is none.
func (cg cgroups) throttler() (throttler, error) {
	switch {
	case cg.blkio != "":
		if _, err := os.Stat(filepath.Join(cg.blkio, v1Files[0])); err != nil {
			return nil, fmt.Errorf("%w: the blkio cgroup at %s has no throttle files (kernel without CONFIG_BLK_DEV_THROTTLING)", ErrNoThrottling, cg.blkio)
		}
		if cg.self != "/" && cg.self != "" {
			return nil, fmt.Errorf("%w: this worker is in blkio cgroup %s; cgroup v1 throttling is flat, so a cap set in the root (where the kernel's writeback runs) would not hold for the worker's own I/O: run the worker in the root blkio cgroup", ErrNoThrottling, cg.self)
		}
		return v1{root: cg.blkio}, nil
	case cg.ioV2:
		return nil, fmt.Errorf("%w: only cgroup v2's io controller is mounted (%s); io.max caps only the cgroup it is set on and catches writeback only with memory on v2, and writepath does not yet move its processes into such a cgroup: use a host with cgroup v1 blkio", ErrNoThrottling, cg.unified)
	}
	return nil, fmt.Errorf("%w: neither cgroup v1 blkio nor cgroup v2 io is mounted", ErrNoThrottling)
}

// v1 is cgroup v1 blkio throttling in the hierarchy's root cgroup: every
// task of the root (the worker, its children, the kernel's flusher
// threads that write back the page cache) shares the cap.
type v1 struct{ root string }

func (t v1) describe() string { return "cgroup v1 blkio.throttle in " + t.root }

func (t v1) changes(dev string) ([]hostknob.Change, error) {
	out := make([]hostknob.Change, 0, len(v1Files))
	for _, f := range v1Files {
		p := filepath.Join(t.root, f)
		before, err := readRule(p, dev)
		if err != nil {
			return nil, err
		}
		out = append(out, hostknob.Change{Kind: KindThrottle, Target: p, Ident: dev, Before: before})
	}
	return out, nil
}

func (t v1) set(dev string, c Cap) error {
	vals := []int64{c.IOPS, c.IOPS, c.BPS, c.BPS}
	for i, f := range v1Files {
		if err := writeRule(filepath.Join(t.root, f), dev, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// readRule returns the device's value in a throttle file, "0" without one.
func readRule(path, dev string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == dev {
			return f[1], nil
		}
	}
	return "0", nil
}

// writeRule writes "MAJ:MIN value" (0 removes the rule) in one write(2).
func writeRule(path, dev string, v int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	_, werr := f.WriteString(dev + " " + strconv.FormatInt(v, 10))
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %q to %s: %w", dev+" "+strconv.FormatInt(v, 10), path, werr)
	}
	return cerr
}

var devRe = regexp.MustCompile(`^[0-9]{1,4}:[0-9]{1,7}$`)

// throttleRestorer writes a throttle rule back. A journal is input, so it
// refuses anything but a v1 throttle file of the blkio hierarchy's root
// and a numeric device and value.
type throttleRestorer struct{ root string }

func (r throttleRestorer) Restore(c hostknob.Change) error {
	if r.root == "" {
		return errors.New("no cgroup v1 blkio hierarchy here")
	}
	if filepath.Dir(c.Target) != r.root || !contains(v1Files, filepath.Base(c.Target)) || !devRe.MatchString(c.Ident) {
		return fmt.Errorf("%w: %s %s is not a throttle rule", hostknob.ErrJournal, c.Target, c.Ident)
	}
	v, err := strconv.ParseInt(c.Before, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("%w: throttle value %q", hostknob.ErrJournal, c.Before)
	}
	if cur, err := readRule(c.Target, c.Ident); err == nil && cur == c.Before {
		return nil
	}
	err = writeRule(c.Target, c.Ident, v)
	if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO) {
		return nil // the device is gone, and its rules with it
	}
	return err
}
