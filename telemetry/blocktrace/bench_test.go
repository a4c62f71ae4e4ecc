package blocktrace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// BenchmarkTraceCost writes b.N 4 KiB O_DIRECT blocks (8 writers, random
// offsets in a 64 MiB file, on the disk of the test's temp directory)
// while traced, this process a process of interest, with the kernel's BPF
// statistics on. It reports the programs' CPU per block request
// (bpf-ns/req, which is also CPU ms per million requests), per traced
// syscall of the host (sys-ns/call: every process's syscalls pass the
// raw syscall tracepoints while a process is followed), and one Tick's
// wall time in user space (tick-us).
//
//	go test -run '^$' -bench TraceCost -benchtime 100000x ./telemetry/blocktrace
func BenchmarkTraceCost(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	dir := b.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		b.Fatal(err)
	}
	d, _, err := diskOf(sysBlock, filepath.Base(nameOfDev(sysBlock, kdev(unix.Major(st.Dev), unix.Minor(st.Dev)))))
	if err != nil {
		b.Fatal(err)
	}
	stats, err := MeasureCost()
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	l, err := Load(Config{Devices: []string{d.name}, PIDs: []int{os.Getpid()}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	f, err := os.OpenFile(filepath.Join(dir, "f"), os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const blocks = 64 << 20 / 4096
	if err := unix.Fallocate(int(f.Fd()), 0, 0, blocks*4096); err != nil {
		b.Fatal(err)
	}
	tr, err := l.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	before, _ := l.Cost()
	progBefore := progStats(b, l)
	b.ResetTimer()
	var wg sync.WaitGroup
	const writers = 8
	for w := range writers {
		wg.Go(func() {
			buf, _ := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
			defer unix.Munmap(buf)
			x := uint64(w*7919 + 1)
			for i := w; i < b.N; i += writers {
				x = x*6364136223846793005 + 1442695040888963407
				if _, err := f.WriteAt(buf, int64(x>>33%blocks)*4096); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	t0 := time.Now()
	snap, err := tr.Tick()
	tick := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	after, _ := l.Cost()
	var reqs int64
	for name := range snap.Encoded {
		if s, ok := series.Parse(name); ok && s.Metric == series.D2C {
			reqs += decoded(b, snap, name).Count()
		}
	}
	if reqs == 0 {
		b.Fatal("no block requests traced")
	}
	b.ReportMetric(float64(after.Block-before.Block)/float64(reqs), "bpf-ns/req")
	if n := after.SyscallRuns - before.SyscallRuns; n > 0 {
		b.ReportMetric(float64(after.Syscalls-before.Syscalls)/float64(n), "sys-ns/call")
	}
	// Each block program's share, per request and per run of its own.
	for n, after := range progStats(b, l) {
		bef := progBefore[n]
		short := strings.TrimPrefix(n, "block_rq_")
		b.ReportMetric(float64(after.Runtime-bef.Runtime)/float64(reqs), short+"-ns/req")
		if runs := after.RunCount - bef.RunCount; runs > 0 {
			b.ReportMetric(float64(after.Runtime-bef.Runtime)/float64(runs), short+"-ns/run")
		}
	}
	b.ReportMetric(float64(reqs), "requests")
	b.ReportMetric(float64(tick.Microseconds()), "tick-us")
}

// progStats is each block program's kernel statistics.
func progStats(b *testing.B, l *Loaded) map[string]*ebpf.ProgramStats {
	out := map[string]*ebpf.ProgramStats{}
	for _, n := range blockProgs {
		s, err := l.block.Programs[n].Stats()
		if err != nil {
			b.Fatal(err)
		}
		out[n] = s
	}
	return out
}

// BenchmarkTick is one interval's read in user space with the map holding
// what a minute of mixed I/O leaves (every key read, most unchanged).
func BenchmarkTick(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	l, err := Load(Config{probes: true}) // recordInKernel fills the pages
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tr, err := l.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	// Fill the pages as a busy phase does: 12 series x 1,000 buckets.
	for s := range 12 {
		vs := make([]uint64, 1000)
		for i := range vs {
			vs[i] = indexValueU(uint32(1000 + i*7))
		}
		recordInKernel(b, l, block(s/3, s%3, s%nOps), vs)
	}
	if _, err := tr.Tick(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// Each interval one more value in every bucket.
		b.StopTimer()
		for s := range 12 {
			vs := make([]uint64, 1000)
			for j := range vs {
				vs[j] = indexValueU(uint32(1000 + j*7))
			}
			recordInKernel(b, l, block(s/3, s%3, s%nOps), vs)
		}
		b.StartTimer()
		snap, err := tr.Tick()
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 && len(snap.Encoded) < 12 { // and the disks' own
			b.Fatalf("%d series; want at least 12", len(snap.Encoded))
		}
	}
}

// BenchmarkSyscallCost is what following a process costs every other
// process on the host: b.N one-byte write(2)s to /dev/null by this process,
// not followed (the followed one is init), with the syscall programs
// attached, which run at every syscall's entry and exit. It reports the
// programs' CPU per syscall (kernel BPF statistics: both programs, every
// syscall of the host in the meantime). Its "followed" case is the
// followed process's own cost: this process is followed, so each write
// also stores and removes its pending entry (the syscalls hash).
//
//	go test -run '^$' -bench SyscallCost -benchtime 1000000x ./telemetry/blocktrace
func BenchmarkSyscallCost(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	b.Run("other", func(b *testing.B) { syscallCost(b, 1) })
	b.Run("followed", func(b *testing.B) { syscallCost(b, os.Getpid()) })
}

func syscallCost(b *testing.B, pid int) {
	stats, err := MeasureCost()
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	l, err := Load(Config{Devices: []string{}, PIDs: []int{pid}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if !l.Syscalls() {
		b.Skipf("no syscall programs: %v", l.SysErr)
	}
	tr, err := l.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := []byte{0}
	before, _ := l.Cost()
	b.ResetTimer()
	for range b.N {
		if _, err := unix.Write(int(f.Fd()), buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after, _ := l.Cost()
	if n := after.SyscallRuns - before.SyscallRuns; n > 0 {
		b.ReportMetric(float64(after.Syscalls-before.Syscalls)/float64(n/2), "bpf-ns/syscall")
	}
}

// BenchmarkLoad is the tracer's start-up: Load and Close, every disk
// traced and a process of interest (the syscall programs load too), as
// `writepath run` loads it. It reports the instructions the verifier
// walked per program (verified-insns, the kernel's count: the load's main
// cost, and machine-independent, unlike the ns/op of a shared machine)
// and the kernel memory the maps lock (map-KiB: what creating them zeroes).
//
//	go test -run '^$' -bench Load -benchtime 20x ./telemetry/blocktrace
func BenchmarkLoad(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	cfg := Config{PIDs: []int{os.Getpid()}}
	insns := map[string]uint32{}
	var mapBytes uint64
	for i := 0; i < b.N; i++ {
		l, err := Load(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.StopTimer()
			for _, c := range []*ebpf.Collection{l.block, l.sys} {
				if c == nil {
					continue
				}
				for n, p := range c.Programs {
					info, err := p.Info()
					if err != nil {
						b.Fatal(err)
					}
					v, _ := info.VerifiedInstructions()
					insns[n] = v
				}
				if c == l.block {
					for _, m := range c.Maps {
						info, err := m.Info()
						if err != nil {
							b.Fatal(err)
						}
						ml, _ := info.Memlock()
						mapBytes += ml
						b.Logf("map %s: %d KiB", info.Name, ml/1024)
					}
				}
			}
			b.StartTimer()
		}
		l.Close()
	}
	var total uint32
	for n, v := range insns {
		total += v
		b.ReportMetric(float64(v), strings.TrimPrefix(n, "block_rq_")+"-insns")
	}
	b.ReportMetric(float64(total), "verified-insns")
	b.ReportMetric(float64(mapBytes)/1024, "map-KiB")
}
