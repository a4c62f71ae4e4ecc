package hostknob

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// memRestorer records restores instead of touching the host.
type memRestorer struct {
	got  []string
	fail map[string]bool
}

func (m *memRestorer) Restore(c Change) error {
	if m.fail[c.Target] {
		return errors.New("refused")
	}
	m.got = append(m.got, c.Target+"="+c.Before)
	return nil
}

func openMem(t *testing.T, dir string, m *memRestorer) *Journal {
	t.Helper()
	j, err := OpenJournal(dir, map[string]Restorer{"mem": m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// TestJournalRecoversOpenSetsNewestFirst: sets a process left open are
// restored at the next open, the newest set first and each set's changes
// in their recorded order; ended sets are not restored.
func TestJournalRecoversOpenSetsNewestFirst(t *testing.T) {
	dir := t.TempDir()
	j := openMem(t, dir, &memRestorer{})
	a, _ := j.Begin([]Change{{Kind: "mem", Target: "a1", Before: "x"}, {Kind: "mem", Target: "a2", Before: "y"}})
	b, _ := j.Begin([]Change{{Kind: "mem", Target: "b1", Before: "z"}})
	if _, err := j.Begin([]Change{{Kind: "mem", Target: "ended", Before: "w"}}); err != nil {
		t.Fatal(err)
	}
	if err := j.End(3); err != nil {
		t.Fatal(err)
	}
	j.Close() // as a killed process leaves it
	m := &memRestorer{}
	j2 := openMem(t, dir, m)
	if got := j2.Pending(); len(got) != 2 {
		t.Fatalf("Pending() = %v; want sets %d and %d", got, a, b)
	}
	if err := j2.Recover(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b1=z", "a1=x", "a2=y"}; !reflect.DeepEqual(m.got, want) {
		t.Errorf("restored %v; want %v", m.got, want)
	}
	if st, _ := os.Stat(j2.Path()); st.Size() != 0 || len(j2.Pending()) != 0 {
		t.Errorf("after recovery: %d bytes, %d sets open; want an empty journal", st.Size(), len(j2.Pending()))
	}
}

// TestJournalFailedRestoreStaysOpen: a set whose restore fails stays in
// the journal for the next start-up.
func TestJournalFailedRestoreStaysOpen(t *testing.T) {
	dir := t.TempDir()
	m := &memRestorer{fail: map[string]bool{"bad": true}}
	j := openMem(t, dir, m)
	id, _ := j.Begin([]Change{{Kind: "mem", Target: "good", Before: "1"}, {Kind: "mem", Target: "bad", Before: "2"}})
	if err := j.Restore(id); err == nil || !strings.Contains(err.Error(), "restore bad") {
		t.Fatalf("Restore = %v; want the failing change named", err)
	}
	j.Close()
	j2 := openMem(t, dir, &memRestorer{})
	if got := j2.Pending(); len(got) != 1 || len(got[0]) != 2 {
		t.Errorf("Pending() after a failed restore = %v; want the set kept", got)
	}
}

// TestJournalTornAndCorrupt: a torn last line (a crash mid-append) is
// ignored; a bad line before the end is an error, not a silent loss.
func TestJournalTornAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	j := openMem(t, dir, &memRestorer{})
	j.Begin([]Change{{Kind: "mem", Target: "a", Before: "1"}})
	j.Close()
	path := filepath.Join(dir, JournalName)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"begin":2,"changes":[{"kind":"me`)
	f.Close()
	j2 := openMem(t, dir, &memRestorer{})
	if got := j2.Pending(); len(got) != 1 {
		t.Errorf("torn last line: Pending() = %v; want the one complete set", got)
	}
	j2.Close()

	os.WriteFile(path, []byte("garbage\n{\"end\":1}\n"), 0o600)
	if _, err := OpenJournal(dir, nil); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("corrupt journal: %v; want ErrJournal naming line 1", err)
	}
}

// TestJournalOneProcess: a second open of the same journal is refused
// while the first holds it (one worker per data directory).
func TestJournalOneProcess(t *testing.T) {
	dir := t.TempDir()
	openMem(t, dir, &memRestorer{})
	if _, err := OpenJournal(dir, nil); !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second OpenJournal = %v; want in use", err)
	}
}

// TestJournalRefusesUnknownKind: a change nobody can restore is refused
// before it is made.
func TestJournalRefusesUnknownKind(t *testing.T) {
	j := openMem(t, t.TempDir(), &memRestorer{})
	if _, err := j.Begin([]Change{{Kind: "nope", Target: "x"}}); err == nil {
		t.Errorf("Begin with an unknown kind succeeded")
	}
}

// TestFileRestorerRefusesForeignPaths: a forged journal cannot make the
// worker write anything but a knob's own file.
func TestFileRestorerRefusesForeignPaths(t *testing.T) {
	r := fileRestorer{sys: "/sys", proc: "/proc"}
	for _, p := range []string{"/etc/passwd", "/sys/class/block/sda/queue/../../../../etc/passwd",
		"/sys/class/block/sda/queue/rotational", "/sys/class/block/sda/device/delete", "/proc/sys/kernel/core_pattern",
		"/proc/sys/vm/drop_caches", "/sys/class/block/a/b/queue/scheduler"} {
		if err := r.Restore(Change{Kind: "file", Target: p, Before: "x"}); !errors.Is(err, ErrJournal) {
			t.Errorf("Restore(%s) = %v; want refused", p, err)
		}
	}
	for _, p := range []string{"/sys/class/block/sda/queue/scheduler", "/proc/sys/vm/dirty_ratio"} {
		if err := r.allowed(p); err != nil {
			t.Errorf("allowed(%s) = %v; want a knob file", p, err)
		}
	}
}

// TestHostJournalTakesOtherChanges: another host change (issue 19's disk
// profiles) journals its own kind through a Host and is restored by the
// next Open after a kill, beside the knobs.
func TestHostJournalTakesOtherChanges(t *testing.T) {
	dir, locks := t.TempDir(), t.TempDir()
	m := &memRestorer{}
	h, err := Open(Config{Dir: dir, LockDir: locks, Restorers: map[string]Restorer{"throttle": m}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Journal().Begin([]Change{{Kind: "throttle", Target: "8:0 wbps", Before: "max"}}); err != nil {
		t.Fatal(err)
	}
	h.Close() // killed
	h2, err := Open(Config{Dir: dir, LockDir: locks, Restorers: map[string]Restorer{"throttle": m}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if !reflect.DeepEqual(m.got, []string{"8:0 wbps=max"}) {
		t.Errorf("restored %v; want the throttle back", m.got)
	}
	if _, err := Open(Config{Dir: t.TempDir(), LockDir: locks, Restorers: map[string]Restorer{"file": m}}); err == nil {
		t.Errorf("a restorer named like the knobs' own was accepted")
	}
}
