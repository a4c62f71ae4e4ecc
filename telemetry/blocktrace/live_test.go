package blocktrace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// loadForTest loads the programs or fails: this project's machines and CI
// run as root on kernels with BTF, where tracing must work.
func loadForTest(t *testing.T, cfg Config) *Loaded {
	t.Helper()
	testenv.Root(t) // CAP_BPF, CAP_PERFMON
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
	l := loadForTest(t, Config{probes: true})
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

// TestKernelRecordMatchesHist records values at every bucket edge and at
// random through the programs' record (BPF_PROG_TEST_RUN of record_probe)
// into series of every kind, twice across two Ticks: each Tick's series
// holds exactly the buckets hist gives those values, page boundaries,
// overflow and counts included. The block series are a slot no disk has
// (the test's disk is slot 0, with other processes' requests on it).
func TestKernelRecordMatchesHist(t *testing.T) {
	l := loadForTest(t, Config{Devices: []string{diskOfDir(t, t.TempDir())}, probes: true})
	tr, err := l.Start()
	if err != nil {
		t.Fatal(err)
	}
	vs := hdrValues()
	cases := []struct {
		s    int
		name string
	}{
		{block(maxDevs-1, mD2C, 1), series.Block("slot15", "write", series.D2C)},
		{block(maxDevs-1, mBytes, 4), series.Block("slot15", "other", series.Bytes)},
		{sRedo + 1, series.Redo("write")},
		{sFdatasync, series.SysFdatasync},
	}
	for round := range 2 {
		recorded := hist.New()
		for _, v := range vs[:len(vs)-round*500] {
			recorded.Record(min(int64(v), hist.Highest+1))
		}
		// As encoded (overflow counted at the top).
		enc, err := recorded.Encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := hist.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			recordInKernel(t, l, c.s, vs[:len(vs)-round*500])
		}
		snap, err := tr.Tick()
		if err != nil {
			t.Fatal(err)
		}
		if snap.Lost != 0 || snap.Dropped != 0 {
			t.Errorf("round %d: %d lost, %d dropped; want none", round, snap.Lost, snap.Dropped)
		}
		for _, c := range cases {
			got := decoded(t, snap, c.name)
			if got == nil {
				t.Errorf("round %d: no series %s", round, c.name)
				continue
			}
			if got.Count() != want.Count() || got.Overflow() != want.Overflow() || !slices.Equal(got.Buckets(), want.Buckets()) {
				t.Errorf("round %d: %s: count %d overflow %d, %d buckets; want %d, %d, %d buckets", round, c.name,
					got.Count(), got.Overflow(), len(got.Buckets()), want.Count(), want.Overflow(), len(want.Buckets()))
			}
		}
	}
	// The next phase starts from empty pages and counts.
	tr.Close()
	if tr, err = l.Start(); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	recordInKernel(t, l, cases[0].s, vs[:3])
	snap, err := tr.Tick()
	if err != nil {
		t.Fatal(err)
	}
	if h := decoded(t, snap, cases[0].name); h == nil || h.Count() != 3 {
		t.Errorf("next phase: %s = %v; want 3 values", cases[0].name, h)
	}
}

// block is a block series' number.
func block(slot, metric, op int) int { return (slot*nBlockMetrics+metric)*nOps + op }

// indexValueU is indexValue as a value to record.
func indexValueU(idx uint32) uint64 { return uint64(indexValue(idx)) }

// recordInKernel records vs into series s through the programs' record.
func recordInKernel(t testing.TB, l *Loaded, s int, vs []uint64) {
	t.Helper()
	prog, m := l.block.Programs[traceProgRecordProbe], l.block.Maps[traceMapProbe]
	for len(vs) > 0 {
		p := traceProbe{Series: uint32(s)}
		n := copy(p.In[:], vs)
		vs, p.N = vs[n:], uint32(n)
		if err := m.Put(uint32(0), &p); err != nil {
			t.Fatal(err)
		}
		if ret, err := prog.Run(&ebpf.RunOptions{}); err != nil || ret != 0 {
			t.Fatalf("run record_probe: %d, %v", ret, err)
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
