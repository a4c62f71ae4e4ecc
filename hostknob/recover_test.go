package hostknob

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/hosttest"
)

// TestVMTwinsRestored: writing dirty_bytes zeroes dirty_ratio in the
// kernel; the restore writes the ratio back (a 0 written to dirty_bytes
// would be refused). Values stay harmless and last well under a second.
func TestVMTwinsRestored(t *testing.T) {
	hosttest.NeedRoot(t)
	saved := hosttest.Save(t, "")
	h := newHost(t, t.TempDir(), t.TempDir(), AllowAll())
	ratio, _ := readAttr("/proc/sys/vm/dirty_ratio")
	if ratio == "0" {
		t.Skip("the host runs on dirty_bytes; this test starts from ratios")
	}
	bg, _ := readAttr("/proc/sys/vm/dirty_background_ratio")
	bgPlus, _ := strconv.Atoi(bg)
	a, err := h.Apply(settings("dirty_bytes=2G", "vm.dirty_background_ratio="+strconv.Itoa(bgPlus+1), "dirty_expire_centisecs=3001"))
	if err != nil {
		t.Fatal(err)
	}
	if r := resultOf(a.Results(), "dirty_bytes"); r.Read != strconv.Itoa(2<<30) || r.Before != "0 (dirty_ratio="+ratio+")" || r.Target != "vm" {
		t.Errorf("dirty_bytes result %+v", r)
	}
	if v, _ := readAttr("/proc/sys/vm/dirty_ratio"); v != "0" {
		t.Errorf("dirty_ratio while dirty_bytes is set = %s; the kernel zeroes it", v)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	saved.Check(t, "after Restore")
}

// TestSharedSetJoins: in-process workers asking for the same settings
// share them (restored when the last lets go); other values of a setting
// in force are refused.
func TestSharedSetJoins(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	h := newHost(t, fs.Dir, t.TempDir(), AllowAll())
	a, err := h.Apply(settings("scheduler=mq-deadline", "nr_requests=512"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Apply(settings("nr_requests=512", "scheduler=mq-deadline"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Apply(settings("nr_requests=64")); !errors.Is(err, ErrBusy) {
		t.Errorf("other value while in force: %v; want ErrBusy", err)
	}
	a.Restore()
	if got := hosttest.QueueAttr(t, fs.Loop, "nr_requests"); got != "512" {
		t.Errorf("nr_requests after the first of two let go = %s; want 512 still", got)
	}
	b.Restore()
	saved.Check(t, "after both let go")
}

// TestKilledProcessRestoredAtOpen: a Host that stops without restoring
// (as a worker killed with -9) leaves the journal open; the next Open on
// the same directory restores everything before it does anything else.
func TestKilledProcessRestoredAtOpen(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	locks := t.TempDir()
	h, err := Open(Config{Dir: fs.Dir, Allow: AllowAll(), LockDir: locks})
	if err != nil {
		t.Fatal(err)
	}
	a, err := h.Apply(settings("scheduler=mq-deadline", "nr_requests=1000", "read_ahead_kb=64", "mount=noatime,commit=20"))
	if err != nil {
		t.Fatal(err)
	}
	die(h, a)
	if len(saved.Diff()) == 0 {
		t.Fatal("nothing changed before the kill")
	}
	other := newHost(t, t.TempDir(), locks, AllowAll())
	other.cfg.Dir = fs.Dir // a second worker process on the same disk
	if _, err := other.Apply(settings("scheduler=none")); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "stopped left it changed") {
		t.Errorf("another process while the dead one's change is in force: %v; want it refused", err)
	}
	h2 := newHost(t, fs.Dir, locks, AllowAll())
	saved.Check(t, "after Open on the killed process's journal")
	if p := h2.journal.Pending(); len(p) != 0 {
		t.Errorf("journal after recovery: %v", p)
	}
	b, err := other.Apply(settings("scheduler=none"))
	if err != nil {
		t.Fatalf("after the restart restored it, another process: %v", err)
	}
	b.Restore()
}

// die drops a Host as a killed process would: journal and locks closed,
// nothing restored.
func die(h *Host, a *Applied) {
	a.a.locks.release(false)
	h.journal.Close()
}

// TestTwoProcessesOneSetting: a setting held by a live Host of another
// journal (another worker process) is refused with ErrBusy.
func TestTwoProcessesOneSetting(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	locks := t.TempDir()
	h := newHost(t, fs.Dir, locks, AllowAll())
	a, err := h.Apply(settings("scheduler=kyber"))
	if err != nil {
		t.Fatal(err)
	}
	other := newHost(t, t.TempDir(), locks, AllowAll())
	other.cfg.Dir = fs.Dir
	if _, err := other.Apply(settings("scheduler=kyber")); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another writepath process") {
		t.Errorf("second process: %v; want ErrBusy", err)
	}
	a.Restore()
	saved.Check(t, "after Restore")
}

// TestDeviceMapperStack: under dm-linear (LVM's shape) the queue knobs go
// to the loop device at the bottom, where requests queue; read_ahead_kb to
// the dm device the filesystem is on.
func TestDeviceMapperStack(t *testing.T) {
	hosttest.NeedDeviceMapper(t)
	fs := hosttest.NewFS(t, hosttest.Options{DM: true})
	saved := hosttest.Save(t, fs.Dir, fs.Loop, fs.DM)
	h := newHost(t, fs.Dir, t.TempDir(), AllowAll())
	a, err := h.Apply(settings("scheduler=mq-deadline", "read_ahead_kb=256"))
	if err != nil {
		t.Fatal(err)
	}
	if r := resultOf(a.Results(), "scheduler"); r.Target != fs.Loop || r.Read != "mq-deadline" {
		t.Errorf("scheduler %+v; want on %s", r, fs.Loop)
	}
	if r := resultOf(a.Results(), "read_ahead_kb"); r.Target != fs.DM || r.Read != "256" {
		t.Errorf("read_ahead_kb %+v; want on %s", r, fs.DM)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	saved.Check(t, "after Restore")
}

// TestNoBlockDevice: queue knobs on a directory without a block device
// (tmpfs) are refused by name; vm knobs still work there.
func TestNoBlockDevice(t *testing.T) {
	hosttest.NeedRoot(t)
	h := newHost(t, "/dev/shm", t.TempDir(), AllowAll())
	h.cfg.JournalDir = t.TempDir()
	if err := h.Check(settings("scheduler=none")); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no block device") {
		t.Errorf("scheduler on tmpfs: %v; want ErrUnavailable", err)
	}
	if err := h.Check(settings("swappiness=60")); err != nil {
		t.Errorf("swappiness on tmpfs: %v", err)
	}
}
