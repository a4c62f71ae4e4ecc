package diskprofile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/internal/hosttest"
	"github.com/writepath/writepath/internal/testenv"
)

// newManager opens a journal in dataDir and a Manager on it; cleanup
// closes both and checks that nothing is left: no rule on any device the
// test touched, no mount under dataDir, an empty journal.
func newManager(t *testing.T, dataDir string, allow Allow) (*Manager, *hostknob.Journal) {
	t.Helper()
	j, err := hostknob.OpenJournal(dataDir, Restorers(dataDir, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{DataDir: dataDir, Journal: j, Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if p := j.Pending(); len(p) > 0 {
			t.Errorf("journal still holds %v after Close", p)
		}
		j.Close()
		checkNoMounts(t, dataDir)
	})
	return m, j
}

// checkNoMounts fails if anything is mounted under dir.
func checkNoMounts(t *testing.T, dir string) {
	t.Helper()
	b, _ := os.ReadFile("/proc/self/mountinfo")
	real, _ := filepath.EvalSymlinks(dir)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && real != "" && strings.HasPrefix(f[4], real+"/") {
			t.Errorf("still mounted: %s", line)
		}
	}
}

// rules returns the v1 throttle rules for dev, "" when none.
func rules(t *testing.T, dev string) string {
	t.Helper()
	var out []string
	for _, f := range v1Files {
		v, err := readRule(filepath.Join("/sys/fs/cgroup/blkio", f), dev)
		if err != nil {
			t.Fatal(err)
		}
		if v != "0" {
			out = append(out, f+"="+v)
		}
	}
	return strings.Join(out, " ")
}

// needV1 skips where the host is not root or has no cgroup v1 blkio
// throttling (host facilities make test cannot install, so they skip
// there too), and through internal/testenv where fio, mkfs.ext4 or mount
// is missing (make test installs them, so they fail there).
func needV1(t *testing.T) {
	t.Helper()
	hosttest.NeedRoot(t)
	if _, err := os.Stat("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device"); err != nil {
		t.Skip("no cgroup v1 blkio throttling here")
	}
	testenv.Fio(t)
	testenv.Binary(t, "mkfs.ext4 (e2fsprogs)", "mkfs.ext4")
	testenv.Binary(t, "mount (util-linux)", "mount")
}

// sampler records a device's counters every 50 ms.
type sampler struct {
	path string
	at   []time.Time
	c    []counters
	q    []int64 // time_in_queue, ms: the device's queue summed over time
	stop chan struct{}
	done chan struct{}
}

func sample(dev string) *sampler {
	s := &sampler{path: filepath.Join("/sys/dev/block", dev, "stat"), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, at, err := readStat(s.path)
			if err == nil {
				s.c, s.at, s.q = append(s.c, c), append(s.at, at), append(s.q, queueMs(s.path))
			}
			select {
			case <-s.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return s
}

func (s *sampler) end() { close(s.stop); <-s.done }

// rate is I/Os and bytes a second between two times.
func (s *sampler) rate(from, to time.Time) (iops, bps float64) {
	i, j := s.index(from), s.index(to)
	d := s.at[j].Sub(s.at[i]).Seconds()
	return float64(s.c[j].ios-s.c[i].ios) / d, float64(s.c[j].bytes-s.c[i].bytes) / d
}

// queue is the device's mean queue (I/Os in it, iostat's aqu-sz) between
// two times.
func (s *sampler) queue(from, to time.Time) float64 {
	i, j := s.index(from), s.index(to)
	return float64(s.q[j]-s.q[i]) / float64(s.at[j].Sub(s.at[i]).Milliseconds())
}

// queueMs is a device's time_in_queue (ms), -1 when unreadable.
func queueMs(path string) int64 {
	b, _ := os.ReadFile(path)
	f := strings.Fields(string(b))
	if len(f) < 11 {
		return -1
	}
	var v int64
	fmt.Sscan(f[10], &v)
	return v
}

// firstIO is the sample before the first I/O.
func (s *sampler) firstIO() time.Time {
	for i := 1; i < len(s.c); i++ {
		if s.c[i].ios > s.c[0].ios {
			return s.at[i-1]
		}
	}
	return s.at[len(s.at)-1]
}

func (s *sampler) index(t time.Time) int {
	for i, at := range s.at {
		if !at.Before(t) {
			return i
		}
	}
	return len(s.at) - 1
}

// fio runs Debian's fio against dir for d and returns its output.
func fio(t *testing.T, ctx context.Context, dir string, d time.Duration, args ...string) []byte {
	t.Helper()
	base := []string{"--name=dp", "--filename=" + filepath.Join(dir, "dp.file"), "--size=96M", "--time_based", fmt.Sprintf("--runtime=%ds", int(d.Seconds())),
		"--ioengine=libaio", "--iodepth=16", "--randrepeat=0", "--allow_file_create=1"}
	if d == 0 {
		base = base[:3]
		base = append(base, "--ioengine=libaio", "--iodepth=16")
	}
	out, err := exec.CommandContext(ctx, "fio", append(base, args...)...).Output()
	if err != nil && ctx.Err() == nil {
		t.Fatalf("fio %v: %v\n%s", args, err, out)
	}
	return out
}

// queueFull is the share of fio's submissions (%) made with the job's whole
// iodepth in flight (its JSON "iodepth_level" at depth), read from
// --output-format=json output: near 100 the load always had an I/O waiting
// for the cap, so the cap alone set the rate; lower, the load itself was
// short (a process starved of CPU on a loaded host).
func queueFull(t *testing.T, out []byte, depth string) float64 {
	t.Helper()
	var r struct {
		Jobs []struct {
			Levels map[string]float64 `json:"iodepth_level"`
		} `json:"jobs"`
	}
	if i := bytes.IndexByte(out, '{'); i >= 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) == 0 {
		t.Fatalf("fio JSON: %v\n%.500s", err, out)
	}
	return r.Jobs[0].Levels[depth]
}

func within(got, want, frac float64) bool { return got >= want*(1-frac) && got <= want*(1+frac) }

// capped reports whether a rate measured from the device's counters over a
// window of 3-5 s holds a cap: never more than 5% above it (the kernel's
// throttle lets at most one 100 ms slice's worth run ahead of the line,
// 3% of a 3 s window; over the 1.4 s windows of before, +5.9% was seen),
// and at most floor below. The ceiling is the throttle's and holds on any
// host; a shortfall is the host's when it has no CPU to spare (see
// floorFor).
func capped(got, limit, floor float64) bool { return got <= limit*1.05 && got >= limit*(1-floor) }

// floorFor is how far below a cap a rate may fall on this host now. With
// CPU to spare, 15%: quiet, the rates land within 2% of the cap. When the
// host's CPU is contended (PSI "some" avg10 over 40%: CI runs packages side
// by side on 2 cores), the throttle's own dispatch (a kblockd work item)
// and writeback lag: 1,126 and 718 IOPS under a 1,200 cap were seen with
// fio's queue full 99% of the time, 264 IOPS of buffered writes under 500;
// the floor then only says the cap is not off by a unit (50%), and the
// rules read back from the cgroup say it was set exactly.
func floorFor(t *testing.T, quiet float64) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return quiet
	}
	var some float64
	if _, err := fmt.Sscanf(string(b), "some avg10=%f", &some); err != nil || some <= 40 {
		return quiet
	}
	t.Logf("CPU pressure %.0f%% (some, avg10): rates may fall 50%% below a cap, not %.0f%%", some, quiet*100)
	return 0.5
}

// TestProfileOnLoopFS runs fio against profiles on a loop filesystem the
// Manager makes: the burst lasts bucket/(burst-baseline), IOPS and
// bandwidth hold the cap at steady state, credits refill at the stated
// rate, and buffered writes with fsync are capped too. Everything is put
// back (checked in newManager's cleanup).
func TestProfileOnLoopFS(t *testing.T) {
	needV1(t)
	dataDir := t.TempDir()
	m, _ := newManager(t, dataDir, Allow{loop: true})
	fs := LoopFS{Dir: "disk", Size: 256 << 20}
	burst := Spec{Profile: Profile{Name: "custom", BaselineIOPS: 400, BurstIOPS: 1200, Bucket: 2800, Credits: -1}, FS: fs}
	if err := m.Prepare(burst); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, "disk")
	// Written once before any cap: writes into unwritten extents cost
	// journal I/O that the measured phases should not pay.
	fio(t, context.Background(), dir, 0, "--rw=write", "--bs=1M", "--direct=1", "--time_based=0")
	dev := m.mu.mounts["disk"].dev
	t.Cleanup(func() {
		if r := rules(t, dev); r != "" {
			t.Errorf("rules left on %s: %s", dev, r)
		}
	})

	t.Run("burst then baseline then refill", func(t *testing.T) {
		h, err := m.Apply(burst)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Restore()
		if r := rules(t, dev); !strings.Contains(r, "blkio.throttle.write_iops_device=1200") {
			t.Errorf("rules on %s during the burst: %q; want write_iops_device=1200", dev, r)
		}
		s := sample(dev)
		start := time.Now()
		var switched time.Time
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var out []byte
		go func() {
			defer close(done)
			out = fio(t, ctx, dir, 8*time.Second, "--rw=randwrite", "--bs=4k", "--direct=1", "--iodepth=32", "--output-format=json")
		}()
		for time.Since(start) < 8*time.Second && switched.IsZero() {
			if h.Values()["disk.cap_iops"] == 400 {
				switched = time.Now()
			}
			time.Sleep(20 * time.Millisecond)
		}
		<-done
		cancel()
		s.end()
		if switched.IsZero() {
			t.Fatalf("the cap never moved to the baseline; values %v", h.Values())
		}
		first := s.firstIO()
		burstFor := switched.Sub(first).Seconds()
		biops, _ := s.rate(first.Add(300*time.Millisecond), switched.Add(-200*time.Millisecond))
		iops, _ := s.rate(switched.Add(500*time.Millisecond), s.at[len(s.at)-1].Add(-300*time.Millisecond))
		full := queueFull(t, out, "32")
		bq := s.queue(first.Add(300*time.Millisecond), switched.Add(-200*time.Millisecond))
		q := s.queue(switched.Add(500*time.Millisecond), s.at[len(s.at)-1].Add(-300*time.Millisecond))
		// The bucket drains at (done - baseline) a second, done counted
		// over the whole burst (its first I/Os included): on a quiet host
		// the load reaches the burst cap and that is 2800/800 = 3.5 s; on a
		// loaded one it may fall short of the cap, and the burst lasts
		// longer by exactly that much.
		whole, _ := s.rate(first, switched)
		want := 2800 / (whole - 400)
		t.Logf("burst %.2f s at %.0f IOPS, %.0f steady (cap 1200; bucket/(IOPS-baseline) = %.2f s), then %.0f IOPS (cap 400); fio's queue full %.1f%% of submissions, the device's %.1f then %.1f",
			burstFor, whole, biops, want, iops, full, bq, q)
		floor := floorFor(t, 0.15)
		// Contended, the Manager's own sampling of the device lags too and
		// the burst ends early by up to a third of the prediction.
		if tol := min(2*floor/3, 0.35); !within(burstFor, want, max(0.10, tol)) {
			t.Errorf("burst lasted %.2f s at %.0f IOPS; want bucket/(IOPS-baseline) = %.2f s within %.0f%%", burstFor, whole, want, max(0.10, tol)*100)
		}
		if !capped(biops, 1200, floor) || !capped(iops, 400, floor) {
			t.Errorf("IOPS %.0f in the burst, %.0f after; want the caps 1200 and 400 (+5%%, -%.0f%%)", biops, iops, floor*100)
		}
		if within(whole, 1200, 0.05) && !within(burstFor, 3.5, 0.10) {
			t.Errorf("at the burst cap the burst lasted %.2f s; want bucket/(burst-baseline) = 3.5 s within 10%%", burstFor)
		}
		time.Sleep(300 * time.Millisecond)
		c1, t1 := h.Values()["disk.credits"], time.Now()
		time.Sleep(2 * time.Second)
		c2, t2 := h.Values()["disk.credits"], time.Now()
		rate := (c2 - c1) / t2.Sub(t1).Seconds()
		t.Logf("refill %.0f credits/s idle (stated 400)", rate)
		if !within(rate, 400, 0.10) {
			t.Errorf("credits refilled at %.0f/s idle; want 400 within 10%%", rate)
		}
	})

	t.Run("buffered writes with fsync", func(t *testing.T) {
		flat := Spec{Profile: Profile{Name: "custom", BaselineIOPS: 500}, FS: fs}
		h, err := m.Apply(flat)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Restore()
		s := sample(dev)
		fio(t, context.Background(), dir, 4*time.Second, "--rw=randwrite", "--bs=4k", "--direct=0", "--fsync=32",
			"--ioengine=psync", "--numjobs=4")
		s.end()
		first := s.firstIO()
		iops, _ := s.rate(first.Add(500*time.Millisecond), s.at[len(s.at)-1].Add(-300*time.Millisecond))
		t.Logf("buffered+fsync: %.0f IOPS at the device (cap 500)", iops)
		// The cap is an upper bound; below it, buffered writes depend on
		// writeback getting CPU, which a loaded CI host starves (423 IOPS
		// seen at load 12): the floor only says the cap is not absurdly low.
		if floor := floorFor(t, 0.25); !capped(iops, 500, floor) {
			t.Errorf("buffered writes with fsync: %.0f IOPS at the device; want the cap 500 (+5%%, -%.0f%%)", iops, floor*100)
		}
	})

	t.Run("bandwidth", func(t *testing.T) {
		bw := Spec{Profile: Profile{Name: "custom", BaselineBPS: 20e6}, FS: fs}
		h, err := m.Apply(bw)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Restore()
		s := sample(dev)
		out := fio(t, context.Background(), dir, 4*time.Second, "--rw=write", "--bs=1M", "--direct=1", "--iodepth=4", "--output-format=json")
		s.end()
		_, bps := s.rate(s.firstIO().Add(500*time.Millisecond), s.at[len(s.at)-1].Add(-300*time.Millisecond))
		full := queueFull(t, out, "4")
		q := s.queue(s.firstIO().Add(500*time.Millisecond), s.at[len(s.at)-1].Add(-300*time.Millisecond))
		t.Logf("1 MiB writes: %.1f MB/s at the device (cap 20); fio's queue full %.1f%% of submissions, the device's %.1f", bps/1e6, full, q)
		if !capped(bps, 20e6, floorFor(t, 0.15)) {
			t.Errorf("bandwidth %.1f MB/s; want the cap 20 MB/s (+5%%, -15%%)", bps/1e6)
		}
	})
}

// TestCheckRefuses: bad targets refuse with one line before anything
// changes (nothing is mounted, no journal set begun).
func TestCheckRefuses(t *testing.T) {
	hosttest.NeedRoot(t)
	dataDir := t.TempDir()
	m, j := newManager(t, dataDir, Allow{devices: []string{"/dev/loop-nonexistent"}})
	root := rootDevice(t)
	capacity, _ := Builtin("capacity")
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Profile: capacity}, "not allowed by this worker's operator (worker --allow-disk loop)"},
		{Spec{Profile: capacity, Device: "/dev/vdz9"}, "no such file"},
		{Spec{Profile: capacity, Device: "/dev/null"}, "not allowed"},
		{Spec{Profile: Profile{Name: "custom", BaselineIOPS: 100, Latency: 2 * time.Millisecond}, Device: "/dev/loop-nonexistent"}, "latency 2ms: not available here: added latency needs device-mapper's dm-delay"},
		{Spec{Profile: Profile{Name: "custom", BaselineIOPS: -1}}, "baseline_iops -1 is negative"},
	} {
		err := m.Check(tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Check(%+v) = %v; want one line with %q", tc.s, err, tc.want)
		}
		if _, aerr := m.Apply(tc.s); aerr == nil {
			t.Errorf("Apply(%+v) succeeded after Check refused", tc.s)
		}
	}
	all, _ := newManager(t, t.TempDir(), AllowAll())
	if _, err := all.deviceTarget(root); err == nil || !strings.Contains(err.Error(), "holds the root filesystem") {
		t.Errorf("deviceTarget(%s) = %v; want the root filesystem's disk refused", root, err)
	}
	if p := j.Pending(); len(p) > 0 {
		t.Errorf("journal after refusals: %v", p)
	}
	if entries, _ := os.ReadDir(filepath.Join(dataDir, StateDir)); len(entries) > 0 {
		t.Errorf("refusals left images: %v", entries)
	}
}

// rootDevice is the node of the root filesystem's device.
func rootDevice(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, _ := strings.Cut(line, " - ")
		if f, pf := strings.Fields(pre), strings.Fields(post); len(f) > 4 && f[4] == "/" && len(pf) > 1 && strings.HasPrefix(pf[1], "/dev/") {
			return pf[1]
		}
	}
	t.Skip("root filesystem has no /dev node")
	return ""
}

// TestThrottlerChoice: the mechanism follows the host's cgroup mounts,
// and a host without one refuses with the reason (fake /proc files).
func TestThrottlerChoice(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	blkio := filepath.Join(dir, "blkio")
	os.Mkdir(blkio, 0o755)
	write("blkio/"+v1Files[0], "")
	unified := filepath.Join(dir, "unified")
	os.Mkdir(unified, 0o755)
	write("unified/cgroup.controllers", "cpuset cpu io memory pids\n")
	for _, tc := range []struct{ mounts, self, want string }{
		{"30 23 0:28 / " + blkio + " rw - cgroup cgroup rw,blkio\n", "7:blkio:/\n", "cgroup v1 blkio.throttle in " + blkio},
		{"30 23 0:28 / " + blkio + " rw - cgroup cgroup rw,blkio\n", "7:blkio:/system.slice/w.service\n", "run the worker in the root blkio cgroup"},
		{"30 23 0:28 / /nowhere rw - cgroup cgroup rw,blkio\n", "7:blkio:/\n", "no throttle files"},
		{"31 23 0:29 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n", "neither cgroup v1 blkio nor cgroup v2 io"},
		// A v2-only host (io.max) is refused, saying why, until writepath
		// moves its processes into a cgroup of its own.
		{"31 23 0:29 / " + unified + " rw - cgroup2 cgroup2 rw\n", "0::/\n", "only cgroup v2's io controller is mounted (" + unified + ")"},
	} {
		cg, err := probeCgroups(write("mountinfo", tc.mounts), write("cgroup", tc.self))
		if err != nil {
			t.Fatal(err)
		}
		th, err := cg.throttler()
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = th.describe()
		}
		if !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
			t.Errorf("mounts %q self %q: %q; want one line with %q", tc.mounts, tc.self, got, tc.want)
		}
	}
}
