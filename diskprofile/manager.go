package diskprofile

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/writepath/writepath/hostknob"
)

// Journal kinds of this package's changes.
const (
	KindThrottle = "blkio-throttle"
	KindMount    = "disk-mount"
)

// Config describes a Manager.
type Config struct {
	// DataDir holds loop filesystems (mounted at DataDir/<dir>, images in
	// DataDir/StateDir).
	DataDir string
	// Journal is the worker's restore journal (hostknob's), opened with
	// Restorers among its restorers and recovered before New.
	Journal *hostknob.Journal
	// Allow is the operator's opt-in; the zero value allows nothing.
	Allow Allow
	// SysDir and MountInfo default to /sys and /proc/self/mountinfo;
	// SelfCgroup to /proc/self/cgroup.
	SysDir, MountInfo, SelfCgroup string
	// Log receives what the controller does; nil discards.
	Log *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.DataDir == "" || c.Journal == nil {
		return c, errors.New("disk profiles: a data directory and a journal are required")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return c, fmt.Errorf("disk profiles: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return c, fmt.Errorf("disk profiles: %w", err)
	}
	c.DataDir = abs
	if c.SysDir == "" {
		c.SysDir = "/sys"
	}
	if c.MountInfo == "" {
		c.MountInfo = "/proc/self/mountinfo"
	}
	if c.SelfCgroup == "" {
		c.SelfCgroup = "/proc/self/cgroup"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Restorers are the journal restorers of this package's changes, to be
// passed to hostknob.OpenJournal beside hostknob.Restorers.
func Restorers(dataDir, sysDir, mountInfo string) map[string]hostknob.Restorer {
	if sysDir == "" {
		sysDir = "/sys"
	}
	if mountInfo == "" {
		mountInfo = "/proc/self/mountinfo"
	}
	abs, _ := filepath.Abs(dataDir)
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	cg, _ := probeCgroups(mountInfo, "/proc/self/cgroup")
	return map[string]hostknob.Restorer{
		KindThrottle: throttleRestorer{root: cg.blkio},
		KindMount:    mountRestorer{stateDir: filepath.Join(abs, StateDir), sysDir: sysDir, mountInfo: mountInfo},
	}
}

// Manager applies disk profiles for one worker process (in-process
// workers sharing a data directory share it). Safe for concurrent use.
type Manager struct {
	cfg     Config
	journal *hostknob.Journal
	mu      struct {
		sync.Mutex
		mounts  map[string]*mounted // by LoopFS.Dir
		active  map[string]*active  // by device
		buckets map[string]*kept    // by device: credits between phases
		closed  bool
	}
}

// kept is a device's credit state between phases.
type kept struct {
	key    string // the profile it belongs to
	bucket *Bucket
	since  time.Time
}

// New returns a Manager; it changes nothing until Prepare or Apply.
func New(cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, journal: cfg.Journal}
	m.mu.mounts, m.mu.active, m.mu.buckets = map[string]*mounted{}, map[string]*active{}, map[string]*kept{}
	return m, nil
}

// Check validates a spec against the operator's opt-in and the kernel,
// changing nothing. Every problem is on the one line.
func (m *Manager) Check(s Spec) error {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return err
	}
	var errs []string
	if _, err := m.throttler(s); err != nil {
		errs = append(errs, err.Error())
	}
	if s.Device != "" {
		if _, err := m.deviceTarget(s.Device); err != nil {
			errs = append(errs, err.Error())
		}
	} else if !m.cfg.Allow.Loop() {
		errs = append(errs, fmt.Sprintf("a loop filesystem in the data directory: %v (worker --allow-disk loop)", ErrNotAllowed))
	}
	if s.Latency > 0 {
		errs = append(errs, latencyUnavailable(s).Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("disk profile %s: %s", s.Name, strings.Join(errs, "; "))
	}
	return nil
}

// latencyUnavailable says why added latency cannot apply here. The
// control node can exist without device-mapper in the kernel (a static
// /dev), so it is opened, not just looked at.
func latencyUnavailable(s Spec) error {
	f, err := os.OpenFile("/dev/mapper/control", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("latency %s: %w: added latency needs device-mapper's dm-delay, and this host has no device-mapper to use (%v)", s.Latency, ErrUnavailable, err)
	}
	f.Close()
	return fmt.Errorf("latency %s: %w: added latency needs device-mapper's dm-delay, which writepath does not stack yet", s.Latency, ErrUnavailable)
}

// throttler is the mechanism for a capped spec; nil for an uncapped one.
func (m *Manager) throttler(s Spec) (throttler, error) {
	if !s.Capped() {
		return nil, nil
	}
	cg, err := probeCgroups(m.cfg.MountInfo, m.cfg.SelfCgroup)
	if err != nil {
		return nil, err
	}
	return cg.throttler()
}

// Prepare readies the spec's target: a loop filesystem is made (first
// time) and mounted, and stays mounted for later phases until Close; a
// mount of another filesystem at the same place is replaced when nobody
// uses it. A device needs nothing.
func (m *Manager) Prepare(s Spec) error {
	if err := m.Check(s); err != nil {
		return err
	}
	s = s.WithDefaults()
	if s.Device != "" {
		return nil
	}
	_, err := m.mount(s.FS)
	return err
}

// mount returns the mounted loop filesystem for fs, mounting it if needed.
func (m *Manager) mount(fs LoopFS) (*mounted, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, errors.New("disk profiles: closed")
	}
	if mt := m.mu.mounts[fs.Dir]; mt != nil {
		if fsIdent(mt.fs) == fsIdent(fs) && strings.Join(mt.fs.MountOptions, ",") == strings.Join(fs.MountOptions, ",") {
			return mt, nil
		}
		if m.mu.active[mt.dev] != nil {
			return nil, fmt.Errorf("disk %s: %w: a phase runs on it with another filesystem", mt.dir, ErrBusy)
		}
		if err := m.unmountLocked(mt); err != nil {
			return nil, err
		}
	}
	mt, err := m.mountFS(fs)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", fs.Dir, err)
	}
	m.cfg.Log.Info("disk profile filesystem mounted", "dir", mt.dir, "device", mt.loop, "fs", fs.Type, "size", fs.Size, "image", mt.image)
	m.mu.mounts[fs.Dir] = mt
	return mt, nil
}

func (m *Manager) unmountLocked(mt *mounted) error {
	if err := m.journal.Restore(mt.set); err != nil {
		return fmt.Errorf("disk %s: %w", mt.dir, err)
	}
	delete(m.mu.mounts, mt.fs.Dir)
	delete(m.mu.buckets, mt.dev)
	return nil
}

// Close removes every cap still in force and unmounts the loop
// filesystems. What fails (a filesystem a server still uses) stays
// mounted and in the journal, for the worker's next start.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closed = true
	var acts []*active
	for _, a := range m.mu.active {
		acts = append(acts, a)
	}
	m.mu.Unlock()
	var errs []error
	for _, a := range acts {
		errs = append(errs, a.stop())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mt := range m.mu.mounts {
		errs = append(errs, m.unmountLocked(mt))
	}
	return errors.Join(errs...)
}
