package hostknob

import (
	"errors"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/hosttest"
)

func newHost(t *testing.T, dir, lockDir string, allow Allow) *Host {
	t.Helper()
	h, err := Open(Config{Dir: dir, Allow: allow, LockDir: lockDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func settings(kv ...string) []Setting {
	var out []Setting
	for _, s := range kv {
		st, err := ParseSetting(s)
		if err != nil {
			panic(err)
		}
		out = append(out, st)
	}
	return out
}

func resultOf(rs []Result, knob string) Result {
	for _, r := range rs {
		if r.Knob == knob {
			return r
		}
	}
	return Result{}
}

// TestApplyRestoreQueueKnobs sets every queue knob on a loop device the
// test made, reads each back (max_sectors_kb above the hardware limit is
// clamped, nr_requests is kept under mq-deadline), and restores all.
func TestApplyRestoreQueueKnobs(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	h := newHost(t, fs.Dir, t.TempDir(), AllowAll())
	hw := hosttest.QueueAttr(t, fs.Loop, "max_hw_sectors_kb")
	a, err := h.Apply(settings("scheduler=mq-deadline", "nr_requests=1024", "nomerges=2", "write_cache=write back",
		"read_ahead_kb=512", "rq_affinity=2", "wbt_lat_usec=0", "max_sectors_kb=999999"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"scheduler": "mq-deadline", "nr_requests": "1024", "nomerges": "2", "write_cache": "write back",
		"read_ahead_kb": "512", "rq_affinity": "2", "wbt_lat_usec": "0", "max_sectors_kb": hw}
	for knob, v := range want {
		r := resultOf(a.Results(), knob)
		if r.Read != v || r.Target != fs.Loop || hosttest.QueueAttr(t, fs.Loop, knob) == "" {
			t.Errorf("%s: result %+v; want read back %q on %s", knob, r, v, fs.Loop)
		}
	}
	if r := resultOf(a.Results(), "scheduler"); r.Before != "none" && r.Before != "mq-deadline" {
		t.Errorf("scheduler before = %q", r.Before)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	saved.Check(t, "after Restore")
	if err := a.Restore(); err != nil {
		t.Errorf("second Restore: %v", err)
	}
}

// TestNrRequestsClampedBelow: the kernel raises a tiny nr_requests to its
// minimum; the run records what it got.
func TestNrRequestsClampedBelow(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	h := newHost(t, fs.Dir, t.TempDir(), AllowAll())
	a, err := h.Apply(settings("nr_requests=1"))
	if err != nil {
		t.Fatal(err)
	}
	if r := resultOf(a.Results(), "nr_requests"); r.Set != "1" || r.Read != "4" {
		t.Errorf("nr_requests=1: %+v; want read back 4 (BLKDEV_MIN_RQ)", r)
	}
	a.Restore()
	saved.Check(t, "after Restore")
}

// TestCheckRefusesBeforeAnyChange: a bad name, a value the kernel
// refuses and a knob the operator did not allow each give one line, and
// neither Check nor Apply changes anything.
func TestCheckRefusesBeforeAnyChange(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	allow, _ := ParseAllow([]string{"scheduler,nr_requests,mount", "dirty_ratio,dirty_bytes"})
	h := newHost(t, fs.Dir, t.TempDir(), allow)
	for _, c := range []struct {
		set  []Setting
		want string
		is   error
	}{
		{settings("shceduler=none"), `host knob "shceduler": unknown host knob (known: scheduler,`, ErrUnknown},
		{settings("scheduler=noop"), `host knob scheduler=noop: bad value: ` + fs.Loop + ` does not offer "noop"`, ErrBadValue},
		{settings("scheduler=none", "nr_requests=100000"), "refuses nr_requests above", ErrBadValue},
		{settings("swappiness=10"), "host knob swappiness: not allowed by this worker's operator (worker --allow-host swappiness, or all)", ErrNotAllowed},
		{settings("dirty_ratio=20", "dirty_bytes=1G"), "keeps only one of the two", nil},
		{settings("mount=commit=abc"), "mount option commit=abc: refused by the kernel: ext4: Bad value for 'commit'", ErrRefused},
		{settings("mount=bogus"), "Unknown parameter 'bogus'", ErrRefused},
		{settings("mount=ro"), `mount option "ro" is not a knob`, ErrBadValue},
		{settings("scheduler=mq-deadline", "swappiness=1"), "swappiness: not allowed", nil},
	} {
		for name, f := range map[string]func([]Setting) error{
			"Check": h.Check,
			"Apply": func(s []Setting) error { _, err := h.Apply(s); return err },
		} {
			err := f(c.set)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || (c.is != nil && !errors.Is(err, c.is)) {
				t.Errorf("%s(%v) = %v; want one line with %q", name, c.set, err, c.want)
			}
		}
		saved.Check(t, "after refusing "+c.want)
	}
}

// TestRefusalPartWayRollsBack: a mount option the filesystem parses but
// refuses on reconfigure (ext4 cannot change data= on remount) fails the
// set after the scheduler and noatime were changed; both are put back.
func TestRefusalPartWayRollsBack(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	h := newHost(t, fs.Dir, t.TempDir(), AllowAll())
	_, err := h.Apply(settings("scheduler=mq-deadline", "mount=noatime,data=writeback"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "mount option data=writeback") {
		t.Fatalf("Apply = %v; want data=writeback refused by name", err)
	}
	saved.Check(t, "after the refusal")
	if p := h.journal.Pending(); len(p) != 0 {
		t.Errorf("journal after rollback: %v; want nothing open", p)
	}
}

// TestMountKnob remounts the test filesystem with the options of the
// field's write-ups, reads them back from the mount table and restores.
func TestMountKnob(t *testing.T) {
	fs := hosttest.NewFS(t, hosttest.Options{MountOptions: "commit=7"})
	saved := hosttest.Save(t, fs.Dir, fs.Loop)
	h := newHost(t, fs.Dir, t.TempDir(), AllowAll())
	a, err := h.Apply(settings("mount=noatime,nodiratime,barrier=0,commit=30,lazytime,noauto_da_alloc"))
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(a.Results(), "mount")
	if r.Before != "relatime,diratime,barrier,commit=7,nolazytime,auto_da_alloc" ||
		r.Set != "noatime,nodiratime,nobarrier,commit=30,lazytime,noauto_da_alloc" || r.Read != r.Set || r.Target != fs.Dir {
		t.Errorf("mount result %+v", r)
	}
	opts := hosttest.MountOptions(t, fs.Dir)
	for _, o := range []string{"noatime", "nodiratime", "nobarrier", "commit=30", "lazytime", "noauto_da_alloc"} {
		if !strings.Contains(opts, o) {
			t.Errorf("mount table %q lacks %s", opts, o)
		}
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	saved.Check(t, "after Restore")
}
