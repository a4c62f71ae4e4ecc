package hosttest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// QueueAttrs are the queue attributes the host knobs change.
var QueueAttrs = []string{"scheduler", "write_cache", "max_sectors_kb", "nr_requests", "nomerges", "rq_affinity", "wbt_lat_usec", "read_ahead_kb"}

// VMSysctls are the vm sysctls the host knobs change, the ratio of each
// twin pair before its bytes.
var VMSysctls = []string{"dirty_ratio", "dirty_bytes", "dirty_background_ratio", "dirty_background_bytes",
	"dirty_expire_centisecs", "dirty_writeback_centisecs", "swappiness"}

// Saved is the host's knob values at one moment: queue attributes of
// some devices, the vm sysctls, a mount's options.
type Saved struct {
	values map[string]string // file -> value
	order  []string
	mount  string // mount point whose options are kept
	opts   string
}

// Save records the knobs of devs, the vm sysctls and the options of the
// mount at mountPoint (if not ""), and puts every value back when the test
// ends, also when it fails.
func Save(t testing.TB, mountPoint string, devs ...string) *Saved {
	t.Helper()
	s := &Saved{values: map[string]string{}, mount: mountPoint}
	for _, d := range devs {
		for _, a := range QueueAttrs {
			s.add(t, filepath.Join("/sys/class/block", d, "queue", a))
		}
	}
	for _, v := range VMSysctls {
		s.add(t, filepath.Join("/proc/sys/vm", v))
	}
	if mountPoint != "" {
		s.opts = MountOptions(t, mountPoint)
	}
	t.Cleanup(func() {
		if diff := s.Diff(); len(diff) > 0 {
			t.Errorf("host settings not as before the test (put back now): %s", strings.Join(diff, "; "))
			s.putBack()
		}
	})
	return s
}

func (s *Saved) add(t testing.TB, path string) {
	v, err := read(path)
	if err != nil {
		t.Fatal(err)
	}
	s.values[path] = v
	s.order = append(s.order, path)
}

// Diff lists every value that is not what it was.
func (s *Saved) Diff() []string {
	var out []string
	for _, p := range s.order {
		if v, err := read(p); err != nil || v != s.values[p] {
			out = append(out, fmt.Sprintf("%s = %q, was %q (%v)", p, v, s.values[p], err))
		}
	}
	if s.mount != "" {
		if o, err := mountOptions(s.mount); err != nil || o != s.opts {
			out = append(out, fmt.Sprintf("mount %s options %q, were %q (%v)", s.mount, o, s.opts, err))
		}
	}
	return out
}

// Check fails the test if any value differs from the saved one.
func (s *Saved) Check(t testing.TB, when string) {
	t.Helper()
	if diff := s.Diff(); len(diff) > 0 {
		t.Errorf("%s: host settings not restored: %s", when, strings.Join(diff, "; "))
	}
}

// putBack writes the saved values: schedulers first (a switch resets
// nr_requests), of each vm twin pair the member in force.
func (s *Saved) putBack() {
	order := slices.Clone(s.order)
	slices.SortStableFunc(order, func(a, b string) int {
		return rank(a) - rank(b)
	})
	for _, p := range order {
		v := s.values[p]
		if cur, _ := read(p); cur == v || (v == "0" && strings.HasSuffix(p, "_bytes")) {
			continue
		}
		os.WriteFile(p, []byte(v), 0)
	}
}

func rank(p string) int {
	switch filepath.Base(p) {
	case "scheduler":
		return 0
	case "write_cache", "max_sectors_kb":
		return 1
	case "read_ahead_kb":
		return 3
	}
	return 2
}

func read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if filepath.Base(path) == "scheduler" {
		for _, f := range strings.Fields(v) {
			if strings.HasPrefix(f, "[") {
				return strings.Trim(f, "[]"), nil
			}
		}
	}
	return v, nil
}

// MountOptions returns a mount's per-mount and superblock options as
// /proc/self/mountinfo shows them ("rw,relatime - rw,commit=30").
func MountOptions(t testing.TB, mountPoint string) string {
	t.Helper()
	o, err := mountOptions(mountPoint)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mountOptions(mountPoint string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	found := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) > 5 && sep > 0 && sep+3 < len(fields) && fields[4] == mountPoint {
			found = fields[5] + " - " + fields[sep+3]
		}
	}
	if found == "" {
		return "", errors.New(mountPoint + " is not mounted")
	}
	return found, sc.Err()
}
