package blocktrace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// loadForTest loads the programs or fails: this project's machines and CI
// run as root on kernels with BTF, where tracing must work.
func loadForTest(t *testing.T, cfg Config) *Loaded {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_BPF, CAP_PERFMON)")
	}
	l, err := Load(cfg)
	if err != nil {
		t.Fatalf("Load(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// diskOfDir is the disk under dir, as the kernel names it.
func diskOfDir(t *testing.T, dir string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	d, _, err := diskOf(sysBlock, filepath.Base(nameOfDev(sysBlock, kdev(unix.Major(st.Dev), unix.Minor(st.Dev)))))
	if err != nil {
		t.Fatal(err)
	}
	return d.name
}

// TestLiveWritesAndFsync writes O_DIRECT 4 KiB blocks and fsyncs them from
// this process while traced: the device's write series and this process's
// fsync and write series must hold at least those requests.
func TestLiveWritesAndFsync(t *testing.T) {
	dir := t.TempDir()
	dev := diskOfDir(t, dir)
	l := loadForTest(t, Config{Devices: []string{dev}, PIDs: []int{os.Getpid()}})
	if !l.Syscalls() {
		t.Fatalf("syscall programs did not load: %v", l.SysErr)
	}
	tr, err := l.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := l.Start(); !errors.Is(err, ErrBusy) {
		t.Errorf("second Start = %v; want ErrBusy", err)
	}
	const n = 64
	f, err := os.OpenFile(filepath.Join(dir, "f"), os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf, _ := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	defer unix.Munmap(buf)
	for i := range n {
		if _, err := f.WriteAt(buf, int64(i)*4096); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := tr.Tick()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for name := range snap.Encoded {
		names = append(names, name)
		if _, ok := series.Parse(name); !ok {
			t.Errorf("series %q does not parse", name)
		}
	}
	w := decoded(t, snap, series.Block(dev, "write", series.D2C))
	if w == nil || w.Count() < n {
		t.Fatalf("%s: %v; want >= %d writes (series %v)", series.Block(dev, "write", series.D2C), w, n, names)
	}
	if s := decoded(t, snap, series.Block(dev, "write", series.Bytes)); s == nil || s.Percentile(50) < 4096 {
		t.Errorf("write sizes: %v", s)
	}
	if fs := decoded(t, snap, series.SysFsync); fs == nil || fs.Count() != n {
		t.Errorf("sys.fsync: %v; want %d (series %v)", fs, n, names)
	}
	if ws := decoded(t, snap, series.SysWriteBytes); ws == nil || ws.Count() < n || !ws.Equivalent(ws.Percentile(50), 4096) {
		t.Errorf("sys.write.bytes: %v; want >= %d of 4096", ws, n)
	}
	// The next Tick holds only what came after.
	snap, _ = tr.Tick()
	if fs := decoded(t, snap, series.SysFsync); fs != nil && fs.Count() != 0 {
		t.Errorf("second Tick: sys.fsync %d; want none", fs.Count())
	}
}

// TestKernelIndexMatchesHist runs the programs' hdr_index in the kernel
// (BPF_PROG_TEST_RUN) over values at every bucket edge and at random, and
// compares with the Go index whose bucket equals package hist's.
func TestKernelIndexMatchesHist(t *testing.T) {
	l := loadForTest(t, Config{})
	prog, m := l.block.Programs[traceProgHdrIndexProbe], l.block.Maps[traceMapProbe]
	vs := hdrValues()
	for len(vs) > 0 {
		var p traceProbe
		n := copy(p.In[:], vs)
		vs = vs[n:]
		if err := m.Put(uint32(0), &p); err != nil {
			t.Fatal(err)
		}
		if ret, err := prog.Run(&ebpf.RunOptions{}); err != nil || ret != 0 {
			t.Fatalf("run probe: %d, %v", ret, err)
		}
		if err := m.Lookup(uint32(0), &p); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if want := hdrIndex(p.In[i]); p.Out[i] != want {
				t.Errorf("kernel hdr_index(%d) = %d; want %d", p.In[i], p.Out[i], want)
			}
		}
	}
}

// decoded is one series of a snapshot, nil when it has none.
func decoded(t testing.TB, s *Snapshot, name string) *hist.Histogram {
	t.Helper()
	b, ok := s.Encoded[name]
	if !ok {
		return nil
	}
	h, err := hist.Decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return h
}
