package fio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// mallocsForRun runs one clone of args to completion and returns the heap
// allocations the run made.
func mallocsForRun(t *testing.T, args ...string) uint64 {
	t.Helper()
	dir := diskDir(t)
	spec, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	clones, _, err := plan(spec, envFor(dir))
	if err != nil {
		t.Fatal(err)
	}
	c := clones[0]
	if _, err := layout(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if err := openClone(c); err != nil {
		t.Fatal(err)
	}
	defer closeAll(clones)
	c.rec = workload.NewRecorder(c.base)
	attachHandles(c, c.rec)
	var stopped atomicFalse
	c.stop = &stopped.Bool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := c.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestHotPathDoesNotAllocate: a run of 4x the I/Os allocates no more than
// a short one, for the sync, libaio and io_uring loops.
func TestHotPathDoesNotAllocate(t *testing.T) {
	for _, engine := range []string{"psync", "libaio", "io_uring"} {
		base := []string{"--name=a", "--rw=randwrite", "--direct=1", "--fsync=4", "--iodepth=8", "--ioengine=" + engine}
		small := mallocsForRun(t, append(base, "--size=256k")...)
		large := mallocsForRun(t, append(base, "--size=1m")...)
		t.Logf("%s: mallocs %d (64 I/Os) vs %d (256 I/Os)", engine, small, large)
		if large > small+16 {
			t.Errorf("%s: 64 I/Os allocate %d times, 256 I/Os %d; want no per-I/O allocation", engine, small, large)
		}
	}
}

// TestNullAndReplayDoNotAllocate: the null engine (at iodepth 1 and its
// queue at 8) with fio's read/write mix, and a replayed log, allocate
// nothing per I/O either.
func TestNullAndReplayDoNotAllocate(t *testing.T) {
	for _, depth := range []string{"1", "8"} {
		base := []string{"--name=a", "--rw=randrw", "--ioengine=null", "--iodepth=" + depth}
		small := mallocsForRun(t, append(base, "--size=1m")...)
		large := mallocsForRun(t, append(base, "--size=4m")...)
		t.Logf("null iodepth=%s: mallocs %d (256 I/Os) vs %d (1024 I/Os)", depth, small, large)
		if large > small+16 {
			t.Errorf("null iodepth=%s: 256 I/Os allocate %d times, 1024 I/Os %d; want no per-I/O allocation", depth, small, large)
		}
	}
	dir := t.TempDir()
	logOf := func(n int) string {
		b := []byte("fio version 2 iolog\nf add\nf open\n")
		for i := 0; i < n; i++ {
			b = fmt.Appendf(b, "f write %d 4096\nf read %d 4096\n", i*4096, i*4096)
		}
		p := filepath.Join(dir, fmt.Sprintf("l%d", n))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := mallocsForRun(t, "--name=r", "--ioengine=null", "--read_iolog="+logOf(64), "--replay_redirect=x")
	large := mallocsForRun(t, "--name=r", "--ioengine=null", "--read_iolog="+logOf(256), "--replay_redirect=x")
	t.Logf("replay: mallocs %d (128 I/Os) vs %d (512 I/Os)", small, large)
	if large > small+16 {
		t.Errorf("replay: 128 I/Os allocate %d times, 512 I/Os %d; want no per-I/O allocation", small, large)
	}
}

// TestLatencyTargetDoesNotAllocate: latency_target's checks (a window
// of 1 µs: one at every turn of the loop) and max_latency's allocate
// nothing per I/O, on the null engine's queue and on libaio.
func TestLatencyTargetDoesNotAllocate(t *testing.T) {
	for _, engine := range []string{"null", "libaio"} {
		base := []string{"--name=a", "--rw=randread", "--iodepth=8", "--ioengine=" + engine, "--latency_target=10s",
			"--latency_window=1", "--latency_run=1", "--latency_percentile=99", "--max_latency=10s"}
		small := mallocsForRun(t, append(base, "--size=1m")...)
		large := mallocsForRun(t, append(base, "--size=4m")...)
		t.Logf("%s latency_target: mallocs %d (256 I/Os) vs %d (1024 I/Os)", engine, small, large)
		if large > small+16 {
			t.Errorf("%s latency_target: 256 I/Os allocate %d times, 1024 I/Os %d; want no per-I/O allocation", engine, small, large)
		}
	}
}

// BenchmarkCompleteIO: the booking of one finished libaio write (its
// clat, lat and slat, in the Recorder), the per-I/O cost.
func BenchmarkCompleteIO(b *testing.B) {
	c := &clone{st: newCloneStats(), recording: true, job: &fiov1.Job{Ioengine: fiov1.IOEngine_IO_ENGINE_LIBAIO}}
	rec := workload.NewRecorder(time.Unix(0, 0))
	c.h[dirWrite] = dirHandle(rec, c.job, "write")
	c.bytes[dirWrite] = rec.Counter("write_bytes")
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	defer func() { b.ReportMetric(float64(threadCPU()-t0)/float64(b.N), "cpu-ns/op") }()
	for i := int64(0); b.Loop(); i++ {
		start := i * 1000
		c.complete(dirWrite, start, start+2000, start+50_000+(i&0xffff)*10, 4096, 4096, 0, true)
	}
}

// threadCPU is the calling thread's CPU time: benchmarks report it per op,
// which other processes on a busy machine disturb far less than the wall
// clock.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
