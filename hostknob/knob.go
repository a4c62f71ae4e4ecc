package hostknob

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Setting is one requested knob value, as a user writes it.
type Setting struct{ Name, Value string }

func (s Setting) String() string { return s.Name + "=" + s.Value }

// ParseSetting parses "name=value" (the value may hold '=' and spaces:
// "mount=noatime,commit=30", "write_cache=write through").
func ParseSetting(kv string) (Setting, error) {
	k, v, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return Setting{}, fmt.Errorf("host knob %q: want name=value", kv)
	}
	return Setting{Name: k, Value: strings.TrimSpace(v)}, nil
}

// scope says where a knob acts.
type scope int

const (
	// queueLeaves: an attribute of the request queues where I/O is
	// queued and dispatched: the disks at the bottom of a dm/md stack, the
	// whole disk of a partition, a loop device itself.
	queueLeaves scope = iota + 1
	// queueTop: an attribute of the queue of the device the filesystem is
	// on (readahead works there).
	queueTop
	// vmSysctl: /proc/sys/vm, global to the host.
	vmSysctl
	// mountOptions: the filesystem holding the directory.
	mountOptions
)

// knob is one setting this package can change.
type knob struct {
	name  string
	scope scope
	// rank orders the writes on one queue, and the restores: an attribute
	// the kernel resets when another is written comes after it.
	rank int
	// affects are sibling attributes the kernel resets when this one is
	// written; their values before are journaled too.
	affects []string
	// twin is the vm sysctl the kernel zeroes when this one is written
	// (dirty_bytes and dirty_ratio overwrite each other).
	twin string
	// check returns the canonical value to write, or why the kernel would
	// refuse v; ctx reads what the kernel publishes.
	check func(v string, ctx checkCtx) (string, error)
	help  string
}

// checkCtx is what a value check may look at: the attribute's queue (for
// queue knobs) and the other settings of the same set.
type checkCtx struct {
	q   *queue // nil for vm and mount knobs
	set map[string]string
}

// pageSize is the kernel page size in bytes: max_sectors_kb cannot go
// below one page, dirty_bytes below two.
var pageSize = int64(os.Getpagesize())

// maxSchedRequests is the block layer's MAX_SCHED_RQ: the deepest
// nr_requests a queue with an I/O scheduler accepts.
const maxSchedRequests = 2048

// knobs is every knob, in the order of the documentation.
var knobs = []*knob{
	{name: "scheduler", scope: queueLeaves, rank: 0, affects: []string{"nr_requests", "wbt_lat_usec"},
		check: checkScheduler, help: "I/O scheduler: one the device offers (none, mq-deadline, kyber, bfq)"},
	{name: "write_cache", scope: queueLeaves, rank: 1, affects: []string{"read_ahead_kb"},
		check: checkWriteCache, help: `"write back" or "write through": whether the kernel sends flushes`},
	{name: "max_sectors_kb", scope: queueLeaves, rank: 1, affects: []string{"read_ahead_kb"},
		check: checkMaxSectors, help: "largest request in KiB (0: the default; above max_hw_sectors_kb the kernel clamps)"},
	{name: "nr_requests", scope: queueLeaves, rank: 2,
		check: checkNrRequests, help: "queue depth (the kernel clamps below 4; at most the tag depth without a scheduler, 2048 with one)"},
	{name: "nomerges", scope: queueLeaves, rank: 2, check: oneOf("0", "1", "2"), help: "0 merges, 1 simple merges only, 2 none"},
	{name: "rq_affinity", scope: queueLeaves, rank: 2, check: oneOf("0", "1", "2"), help: "completion CPU: 0 any, 1 the submitter's group, 2 the submitter's"},
	{name: "wbt_lat_usec", scope: queueLeaves, rank: 2, check: intRange(-1, 1<<62), help: "writeback throttling target latency in µs (0 off, -1 the default)"},
	{name: "read_ahead_kb", scope: queueTop, rank: 3, check: intRange(0, 1<<31), help: "readahead in KiB, on the device the filesystem is on"},
	{name: "dirty_ratio", scope: vmSysctl, twin: "dirty_bytes", check: intRange(0, 100), help: "vm: % of memory dirty before writers block (zeroes dirty_bytes)"},
	{name: "dirty_bytes", scope: vmSysctl, twin: "dirty_ratio", check: byteSize(2), help: "vm: bytes dirty before writers block, K/M/G suffixes (zeroes dirty_ratio)"},
	{name: "dirty_background_ratio", scope: vmSysctl, twin: "dirty_background_bytes", check: intRange(0, 100), help: "vm: % of memory dirty before background writeback (zeroes dirty_background_bytes)"},
	{name: "dirty_background_bytes", scope: vmSysctl, twin: "dirty_background_ratio", check: byteSize(0), help: "vm: bytes dirty before background writeback (zeroes dirty_background_ratio)"},
	{name: "dirty_expire_centisecs", scope: vmSysctl, check: intRange(0, 1<<31-1), help: "vm: age in 1/100 s at which dirty data is written"},
	{name: "dirty_writeback_centisecs", scope: vmSysctl, check: intRange(0, 1<<31-1), help: "vm: flusher wake-up period in 1/100 s (0 off)"},
	{name: "swappiness", scope: vmSysctl, check: intRange(0, 200), help: "vm: 0..200"},
	{name: "mount", scope: mountOptions, help: "remount options of the directory's filesystem, comma-separated (" + strings.Join(mountOptionNames(), ", ") + ")"},
}

// lookup finds a knob by name; "vm.dirty_ratio" (sysctl's spelling)
// names dirty_ratio.
func lookup(name string) (*knob, bool) {
	name = strings.TrimPrefix(name, "vm.")
	for _, k := range knobs {
		if k.name == name {
			return k, true
		}
	}
	return nil, false
}

// Names lists every knob name.
func Names() []string {
	out := make([]string, 0, len(knobs))
	for _, k := range knobs {
		out = append(out, k.name)
	}
	return out
}

// Help returns one line per knob: its name and what it sets.
func Help() []string {
	out := make([]string, 0, len(knobs))
	for _, k := range knobs {
		out = append(out, fmt.Sprintf("%-26s %s", k.name, k.help))
	}
	return out
}

// Canonical returns a knob's canonical name, or ErrUnknown naming the
// known ones.
func Canonical(name string) (string, error) {
	k, ok := lookup(name)
	if !ok {
		return "", fmt.Errorf("host knob %q: %w (known: %s)", name, ErrUnknown, strings.Join(Names(), ", "))
	}
	return k.name, nil
}

func checkScheduler(v string, c checkCtx) (string, error) {
	if !slices.Contains(c.q.schedulers, v) {
		return "", fmt.Errorf("%w: %s does not offer %q (it offers: %s)", ErrBadValue, c.q.name, v, strings.Join(c.q.schedulers, " "))
	}
	return v, nil
}

func checkWriteCache(v string, _ checkCtx) (string, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(v, "-", " "), "_", " ")) {
	case "write back", "writeback":
		return "write back", nil
	case "write through", "writethrough":
		return "write through", nil
	}
	return "", fmt.Errorf(`%w %q: want "write back" or "write through"`, ErrBadValue, v)
}

func checkMaxSectors(v string, c checkCtx) (string, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || (n > 0 && n < pageSize/1024) {
		return "", fmt.Errorf("%w %q: want 0 (the default) or at least %d KiB", ErrBadValue, v, pageSize/1024)
	}
	return strconv.FormatInt(n, 10), nil
}

// checkNrRequests mirrors blk_mq_update_nr_requests: without a scheduler
// the depth cannot exceed the hardware tags, with one MAX_SCHED_RQ. The
// scheduler that counts is the one in force once the set is applied.
func checkNrRequests(v string, c checkCtx) (string, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return "", fmt.Errorf("%w %q: want a whole number", ErrBadValue, v)
	}
	sched := c.q.scheduler
	if s, ok := c.set["scheduler"]; ok {
		sched = s
	}
	limit, why := int64(maxSchedRequests), "with a scheduler"
	if sched == "none" {
		limit, why = c.q.tags, "the device's tag depth, with scheduler none"
	}
	if limit > 0 && n > limit {
		return "", fmt.Errorf("%w: %s refuses nr_requests above %d (%s)", ErrBadValue, c.q.name, limit, why)
	}
	return strconv.FormatInt(n, 10), nil
}

func oneOf(vals ...string) func(string, checkCtx) (string, error) {
	return func(v string, _ checkCtx) (string, error) {
		if !slices.Contains(vals, v) {
			return "", fmt.Errorf("%w %q: want one of %s", ErrBadValue, v, strings.Join(vals, ", "))
		}
		return v, nil
	}
}

func intRange(lo, hi int64) func(string, checkCtx) (string, error) {
	return func(v string, _ checkCtx) (string, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return "", fmt.Errorf("%w %q: want a whole number from %d to %d", ErrBadValue, v, lo, hi)
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// byteSize accepts bytes with an optional K, M or G (powers of 1024) and
// refuses less than minPages pages (at least 1 byte).
func byteSize(minPages int64) func(string, checkCtx) (string, error) {
	return func(v string, _ checkCtx) (string, error) {
		lo := max(1, minPages*pageSize)
		n, ok := parseBytes(v)
		if !ok || n < lo {
			return "", fmt.Errorf("%w %q: want at least %d bytes (K, M, G suffixes)", ErrBadValue, v, lo)
		}
		return strconv.FormatInt(n, 10), nil
	}
}

func parseBytes(v string) (int64, bool) {
	mult := int64(1)
	s := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(v, "iB"), "B"))
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}
