package diskprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// active is one device's caps in force and its controller.
type active struct {
	m      *Manager
	dev    string
	key    string
	refs   int // guarded by m.mu
	set    uint64
	th     throttler
	bucket *Bucket // owned by the controller goroutine until done closes
	stopc  chan struct{}
	done   chan struct{}
	once   sync.Once
	err    error
	mu     struct {
		sync.Mutex
		vals map[string]float64
	}
}

// Applied is one phase's hold on a profile in force.
type Applied struct {
	a      *active // nil for an uncapped profile
	device string  // kernel name of the device the profile is on
	once   sync.Once
	err    error
}

// Device is the kernel name of the device the profile is on ("loop3"),
// for iostat beside its credits.
func (h *Applied) Device() string {
	if h == nil {
		return ""
	}
	return h.device
}

// profileKey identifies a profile's numbers: a device keeps its credits
// between phases of the same profile.
func profileKey(p Profile) string {
	p.Name, p.Source = "", ""
	return fmt.Sprintf("%+v", p)
}

// Apply puts a spec's caps in force: it prepares the target, journals the
// throttle rules as they are (fsynced), writes the cap, and starts the
// controller. Phases of in-process workers asking for the same profile on
// the same device share it; another profile on a device in use is refused.
func (m *Manager) Apply(s Spec) (*Applied, error) {
	if err := m.Prepare(s); err != nil {
		return nil, err
	}
	s = s.WithDefaults()
	th, _ := m.throttler(s) // checked by Prepare
	dev, err := m.target(s)
	if err != nil {
		return nil, err
	}
	name := m.devName(dev)
	if th == nil {
		return &Applied{device: name}, nil
	}
	key := profileKey(s.Profile)
	m.mu.Lock()
	defer m.mu.Unlock()
	if a := m.mu.active[dev]; a != nil {
		if a.key != key {
			return nil, fmt.Errorf("disk %s: %w: another profile is in force on it", dev, ErrBusy)
		}
		a.refs++
		return &Applied{a: a, device: name}, nil
	}
	a, err := m.start(s, dev, key, th)
	if err != nil {
		return nil, err
	}
	m.mu.active[dev] = a
	return &Applied{a: a, device: name}, nil
}

// devName is a device's kernel name from sysfs ("loop3", "sdb").
func (m *Manager) devName(dev string) string {
	b, _ := os.ReadFile(filepath.Join(m.cfg.SysDir, "dev", "block", dev, "uevent"))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			return v
		}
	}
	return ""
}

// target is the device a spec caps: the loop filesystem's, or the whole
// disk of the named device.
func (m *Manager) target(s Spec) (string, error) {
	if s.Device != "" {
		return m.deviceTarget(s.Device)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mt := m.mu.mounts[s.FS.Dir]
	if mt == nil {
		return "", fmt.Errorf("disk %s: not mounted", s.FS.Dir)
	}
	return mt.dev, nil
}

// start journals, caps and starts the controller; m.mu is held.
func (m *Manager) start(s Spec, dev, key string, th throttler) (*active, error) {
	changes, err := th.changes(dev)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", dev, err)
	}
	set, err := m.journal.Begin(changes)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", dev, err)
	}
	b := NewBucket(s.Profile)
	if k := m.mu.buckets[dev]; k != nil && k.key == key && s.Credits < 0 {
		b = k.bucket
		b.Idle(time.Since(k.since))
	}
	if err := th.set(dev, b.Cap()); err != nil {
		if rerr := m.journal.Restore(set); rerr != nil {
			err = fmt.Errorf("%w; restoring also failed: %v", err, rerr)
		}
		return nil, fmt.Errorf("disk %s: %w", dev, err)
	}
	a := &active{m: m, dev: dev, key: key, refs: 1, set: set, th: th, bucket: b,
		stopc: make(chan struct{}), done: make(chan struct{})}
	a.mu.vals = values(b, s.Profile)
	m.cfg.Log.Info("disk profile in force", "profile", s.Name, "device", dev, "via", th.describe(),
		"cap_iops", b.Cap().IOPS, "cap_bps", b.Cap().BPS, "credits", int64(b.Balance()))
	go a.control(s.Profile) // owned: stop waits for done
	return a, nil
}

// control steps the bucket every StepInterval from the device's own
// counters and moves the cap when the bucket says so.
func (a *active) control(p Profile) {
	defer close(a.done)
	t := time.NewTicker(StepInterval)
	defer t.Stop()
	statPath := filepath.Join(a.m.cfg.SysDir, "dev", "block", a.dev, "stat")
	last, lastAt, _ := readStat(statPath)
	cur := a.bucket.Cap()
	for {
		select {
		case <-a.stopc:
			return
		case <-t.C:
		}
		now, at, err := readStat(statPath)
		if err != nil {
			continue
		}
		c := a.bucket.Step(now.ios-last.ios, now.bytes-last.bytes, at.Sub(lastAt))
		last, lastAt = now, at
		if c != cur {
			if err := a.th.set(a.dev, c); err != nil {
				a.m.cfg.Log.Error("disk profile: moving the cap", "device", a.dev, "err", err)
				continue
			}
			a.m.cfg.Log.Info("disk profile cap moved", "device", a.dev, "cap_iops", c.IOPS, "cap_bps", c.BPS, "credits", int64(a.bucket.Balance()))
			cur = c
		}
		v := values(a.bucket, p)
		a.mu.Lock()
		a.mu.vals = v
		a.mu.Unlock()
	}
}

// values are the telemetry of a bucket: balance and cap in force.
func values(b *Bucket, p Profile) map[string]float64 {
	c := b.Cap()
	v := map[string]float64{"disk.cap_iops": float64(c.IOPS), "disk.cap_mbps": float64(c.BPS) / 1e6}
	if p.Bursts() {
		v["disk.credits"] = b.Balance()
		v["disk.credits_pct"] = 100 * b.Balance() / float64(p.Bucket)
	}
	return v
}

// counters are a device's completed I/Os and bytes.
type counters struct{ ios, bytes int64 }

// readStat reads /sys/dev/block/D/stat: reads and writes completed, and
// their sectors (512 bytes whatever the device's block size).
func readStat(path string) (counters, time.Time, error) {
	t0 := time.Now()
	b, err := os.ReadFile(path)
	at := t0.Add(time.Since(t0) / 2) // the read's midpoint: a descheduled read skews less
	if err != nil {
		return counters{}, at, err
	}
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return counters{}, at, fmt.Errorf("%s: %d fields", path, len(f))
	}
	var n [7]int64
	for _, i := range []int{0, 2, 4, 6} {
		fmt.Sscan(f[i], &n[i])
	}
	return counters{ios: n[0] + n[4], bytes: (n[2] + n[6]) * 512}, at, nil
}

// Values are the credit balance and the cap in force ("disk.credits",
// "disk.credits_pct", "disk.cap_iops", "disk.cap_mbps"); none for an
// uncapped profile.
func (h *Applied) Values() map[string]float64 {
	if h == nil || h.a == nil {
		return nil
	}
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	out := make(map[string]float64, len(h.a.mu.vals))
	for k, v := range h.a.mu.vals {
		out[k] = v
	}
	return out
}

// Restore gives up this hold; the last holder stops the controller and
// puts the throttle rules back. Safe to call more than once.
func (h *Applied) Restore() error {
	if h == nil || h.a == nil {
		return nil
	}
	h.once.Do(func() {
		m := h.a.m
		m.mu.Lock()
		h.a.refs--
		last := h.a.refs == 0
		m.mu.Unlock()
		if last {
			h.err = h.a.stop()
		}
	})
	return h.err
}

// stop ends the controller, restores the rules and keeps the credits.
func (a *active) stop() error {
	a.once.Do(func() {
		close(a.stopc)
		<-a.done
		m := a.m
		a.err = m.journal.Restore(a.set)
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.mu.active, a.dev)
		m.mu.buckets[a.dev] = &kept{key: a.key, bucket: a.bucket, since: time.Now()}
		if a.err != nil {
			a.err = fmt.Errorf("disk %s: restore: %w", a.dev, a.err)
		}
	})
	return a.err
}

// deviceTarget checks a named device against the opt-in and the root
// filesystem's disk, and returns the whole disk's "MAJ:MIN" (the kernel
// throttles whole disks, not partitions).
func (m *Manager) deviceTarget(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("device %s: %w: %w", path, ErrUnavailable, err)
	}
	allowed := m.cfg.Allow.all
	for _, d := range m.cfg.Allow.devices {
		r, err := filepath.EvalSymlinks(d)
		allowed = allowed || d == path || (err == nil && r == real)
	}
	if !allowed {
		return "", fmt.Errorf("device %s: %w (worker --allow-disk %s)", path, ErrNotAllowed, path)
	}
	dev, err := devNumber(real)
	if err != nil {
		return "", fmt.Errorf("device %s: %w", path, err)
	}
	whole := m.wholeDisk(dev)
	var st unix.Stat_t
	if err := unix.Stat("/", &st); err == nil {
		if root := m.wholeDisk(fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))); root == whole {
			return "", fmt.Errorf("device %s: %w: it holds the root filesystem", path, ErrNotAllowed)
		}
	}
	return whole, nil
}

// wholeDisk maps a partition's "MAJ:MIN" to its disk's.
func (m *Manager) wholeDisk(dev string) string {
	sys := filepath.Join(m.cfg.SysDir, "dev", "block", dev)
	if _, err := os.Stat(filepath.Join(sys, "partition")); err != nil {
		return dev
	}
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		return dev
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "dev"))
	if err != nil {
		return dev
	}
	return strings.TrimSpace(string(b))
}
