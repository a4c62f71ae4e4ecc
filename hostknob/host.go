package hostknob

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// Config describes a Host.
type Config struct {
	// Dir is the directory whose disks and filesystem the knobs act on
	// (the worker's data directory).
	Dir string
	// JournalDir holds the restore journal; empty means Dir.
	JournalDir string
	// Allow is the operator's allow-list; the zero value allows nothing.
	Allow Allow
	// SysDir, ProcDir and MountInfo default to /sys, /proc and
	// /proc/self/mountinfo.
	SysDir, ProcDir, MountInfo string
	// LockDir defaults to DefaultLockDir.
	LockDir string
	// Restorers are more kinds of Change for the journal, for other host
	// changes journaled beside the knobs (a disk profile's throttles):
	// their users reach the journal through Host.Journal.
	Restorers map[string]Restorer
	// Log receives what was restored at start-up; nil discards.
	Log *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Dir == "" {
		return c, fmt.Errorf("host knobs: no directory")
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return c, fmt.Errorf("host knobs: %w", err)
	}
	c.Dir = abs
	if c.JournalDir == "" {
		c.JournalDir = c.Dir
	}
	if c.SysDir == "" {
		c.SysDir = "/sys"
	}
	if c.ProcDir == "" {
		c.ProcDir = "/proc"
	}
	if c.MountInfo == "" {
		c.MountInfo = filepath.Join(c.ProcDir, "self", "mountinfo")
	}
	if c.LockDir == "" {
		c.LockDir = DefaultLockDir
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Result is one knob on one target as applied.
type Result struct {
	Knob   string // canonical name
	Target string // a device ("loop0"), "vm", or a mount point
	Before string // the value in force before
	Set    string // the value written (canonical)
	Read   string // the value read back afterwards: the kernel may clamp
}

// Host applies knobs to the disks and filesystem behind one directory.
// It is safe for concurrent use: workers of one process share a Host, and
// a run asking for exactly the settings already in force joins them; a
// run asking for other values of a setting in use is refused.
type Host struct {
	cfg     Config
	journal *Journal
	locks   locks
	// recoverErr is why the changes a stopped process left could not all
	// be restored; while set, every knob is refused.
	recoverErr error
	mu         struct {
		sync.Mutex
		active map[string]*active // by plan key
	}
}

// active is a set of settings in force.
type active struct {
	key       string
	id        uint64 // journal set
	results   []Result
	resources []string
	refs      int
	locks     held
	broken    error // its restore failed
}

// Open opens the journal in cfg.JournalDir and restores whatever a
// process killed before its restore left changed. A failed recovery is
// logged and returned; the Host is still usable for runs without knobs
// (it refuses every knob until a restart recovers).
func Open(cfg Config) (*Host, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := diskstats.Resolver{SysDir: cfg.SysDir, MountInfo: cfg.MountInfo}
	restorers := Restorers(cfg.SysDir, cfg.ProcDir, r)
	for kind, rs := range cfg.Restorers {
		if restorers[kind] != nil {
			return nil, fmt.Errorf("host knobs: restorer %q is the knobs' own", kind)
		}
		restorers[kind] = rs
	}
	j, err := OpenJournal(cfg.JournalDir, restorers)
	if err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, journal: j, locks: locks{dir: cfg.LockDir, journal: j.Path()}}
	h.mu.active = map[string]*active{}
	if pending := j.Pending(); len(pending) > 0 {
		cfg.Log.Warn("restoring host settings a stopped worker left changed", "journal", j.Path(), "sets", len(pending), "changes", pending)
		if err := j.Recover(); err != nil {
			h.recoverErr = fmt.Errorf("host knobs: restoring what a stopped worker left changed (journal %s): %w", j.Path(), err)
			cfg.Log.Error("host settings not restored", "err", h.recoverErr)
			return h, h.recoverErr
		}
	}
	h.locks.clearOwn()
	return h, nil
}

// Restorers are the journal's restorers of the knobs' changes: "file"
// (a knob's sysfs or procfs file) and "remount". Another user of the
// journal adds its own kinds beside them.
func Restorers(sysDir, procDir string, r diskstats.Resolver) map[string]Restorer {
	return map[string]Restorer{
		"file":    fileRestorer{sys: sysDir, proc: procDir},
		"remount": remountRestorer{r: r},
	}
}

func (h *Host) resolver() diskstats.Resolver {
	return diskstats.Resolver{SysDir: h.cfg.SysDir, MountInfo: h.cfg.MountInfo}
}

// Allow is the operator's allow-list.
func (h *Host) Allow() Allow { return h.cfg.Allow }

// Journal is the restore journal, for other host changes of this worker
// (one journal per data directory; Config.Restorers restores their kinds).
// Begin a set before changing anything, Restore it when done.
func (h *Host) Journal() *Journal { return h.journal }

// Check validates settings as Apply would, changing nothing: knob names,
// the allow-list, the values against what the kernel publishes (the
// schedulers a device offers, nr_requests' limits, the filesystem's own
// parse of mount options). Every problem is in the one-line error.
func (h *Host) Check(settings []Setting) error {
	_, err := h.plan(settings)
	return err
}

// Applied is one run's hold on a set of settings in force.
type Applied struct {
	h    *Host
	a    *active
	once sync.Once
	err  error
}

// Results is each knob on each target: before, set, read back.
func (a *Applied) Results() []Result {
	if a == nil {
		return nil
	}
	return slices.Clone(a.a.results)
}

// Apply checks settings, journals the values before (fsynced), sets every
// knob in order and reads each back. If the kernel refuses one, what was
// already changed is restored and the error names the knob. With no
// settings it does nothing and returns nil.
func (h *Host) Apply(settings []Setting) (*Applied, error) {
	if len(settings) == 0 {
		return nil, nil
	}
	p, err := h.plan(settings)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.mu.active[p.key]; a != nil && a.broken == nil {
		a.refs++
		return &Applied{h: h, a: a}, nil
	}
	if err := h.overlapLocked(p); err != nil {
		return nil, err
	}
	a, err := h.execute(p)
	if err != nil {
		return nil, err
	}
	h.mu.active[p.key] = a
	return &Applied{h: h, a: a}, nil
}

// overlapLocked refuses a plan touching a setting another set holds.
func (h *Host) overlapLocked(p *plan) error {
	for _, a := range h.mu.active {
		for _, r := range p.resources {
			if !slices.Contains(a.resources, r) {
				continue
			}
			if a.broken != nil {
				return fmt.Errorf("host knobs: %s: its earlier restore failed (%v); restart the worker to retry", r, a.broken)
			}
			return fmt.Errorf("host knobs: %s: %w (in force: %s)", r, ErrBusy, describe(a.results))
		}
	}
	return nil
}

// execute takes the locks, journals and applies p; on any failure the
// host is left as it was.
func (h *Host) execute(p *plan) (*active, error) {
	lk, err := h.locks.acquire(p.resources)
	if err != nil {
		return nil, fmt.Errorf("host knobs: %w", err)
	}
	id, err := h.journal.Begin(p.changes)
	if err != nil {
		lk.release(true)
		return nil, fmt.Errorf("host knobs: %w", err)
	}
	if err := h.write(p); err != nil {
		if rerr := h.journal.Restore(id); rerr != nil {
			lk.release(false)
			return nil, fmt.Errorf("%w; restoring what was changed also failed: %v", err, rerr)
		}
		lk.release(true)
		return nil, err
	}
	res, err := h.readBack(p)
	if err != nil {
		if rerr := h.journal.Restore(id); rerr == nil {
			lk.release(true)
		}
		return nil, err
	}
	return &active{key: p.key, id: id, results: res, resources: p.resources, refs: 1, locks: lk}, nil
}

// Restore gives up this run's hold; the last holder puts every value back
// in order. Safe to call more than once.
func (a *Applied) Restore() error {
	if a == nil {
		return nil
	}
	a.once.Do(func() { a.err = a.h.release(a.a) })
	return a.err
}

func (h *Host) release(a *active) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.refs--; a.refs > 0 {
		return nil
	}
	if err := h.journal.Restore(a.id); err != nil {
		a.broken = fmt.Errorf("host knobs: restore: %w", err)
		a.locks.release(false)
		return a.broken
	}
	a.locks.release(true)
	delete(h.mu.active, a.key)
	return nil
}

// Close closes the journal. Settings still in force stay journaled, for
// the next Open to restore.
func (h *Host) Close() error { return h.journal.Close() }

// describe lists results as "scheduler=none on loop0, ...".
func describe(rs []Result) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += ", "
		}
		out += r.Knob + "=" + r.Set + " on " + r.Target
	}
	return out
}
