package fio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/beneath"
	"github.com/writepath/writepath/workload"
)

// TestDirectRunCountsAndBytes runs real O_DIRECT I/O on small files with
// every engine and pattern and checks the counts against the file size:
// a non-time-based random job with the random map touches every block once.
func TestDirectRunCountsAndBytes(t *testing.T) {
	const size, bs = 1 << 20, 4096
	tests := []struct {
		name       string
		args       []string
		ios, syncs int64 // reads+writes, syncs
		loops      int64
	}{
		{"psync randwrite", []string{"--ioengine=psync", "--rw=randwrite"}, 256, 0, 1},
		{"sync write", []string{"--ioengine=sync", "--rw=write"}, 256, 0, 1},
		{"pvsync randread", []string{"--ioengine=pvsync", "--rw=randread"}, 256, 0, 1},
		{"libaio randwrite fsync=4", []string{"--ioengine=libaio", "--iodepth=8", "--rw=randwrite", "--fsync=4"}, 256, 63, 1},
		{"libaio randrw", []string{"--ioengine=libaio", "--iodepth=4", "--rw=randrw", "--rwmixread=70"}, 256, 0, 1},
		{"io_uring read loops=2", []string{"--ioengine=io_uring", "--iodepth=16", "--rw=read", "--loops=2"}, 512, 0, 2},
		// io_uring syncs fly beside the writes and fio queues another after
		// the same write until one completes: fio 3.33 gave 171-210 syncs
		// here. -1: at least one per N writes, at most one per request slot.
		{"io_uring randwrite fsync=4", []string{"--ioengine=io_uring", "--iodepth=8", "--rw=randwrite", "--fsync=4"}, 256, -1, 1},
		{"io_uring randwrite fdatasync=16", []string{"--ioengine=io_uring", "--iodepth=32", "--rw=randwrite", "--fdatasync=16"}, 256, -1, 1},
		{"psync fdatasync=8 end_fsync", []string{"--rw=write", "--fdatasync=8", "--end_fsync=1"}, 256, 31 + 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := diskDir(t)
			args := append([]string{"--name=t", "--size=1m", "--bs=4k", "--direct=1"}, tt.args...)
			w, snap, err := runArgs(t, dir, args...)
			if err != nil {
				t.Fatalf("Run(%q) = %v", args, err)
			}
			st := totals(t, w)
			ios := st.dir[dirRead].ios + st.dir[dirWrite].ios
			bytes := st.dir[dirRead].bytes + st.dir[dirWrite].bytes
			if tt.syncs < 0 && (st.syncIOs+st.datasyncIOs) >= 15 && (st.syncIOs+st.datasyncIOs) <= 8*256 {
				tt.syncs = (st.syncIOs + st.datasyncIOs)
			}
			if ios != tt.ios || bytes != tt.loops*size || (st.syncIOs+st.datasyncIOs) != tt.syncs {
				t.Errorf("Run(%q): %d I/Os, %d bytes, %d syncs; want %d, %d, %d", args, ios, bytes, (st.syncIOs + st.datasyncIOs), tt.ios, tt.loops*size, tt.syncs)
			}
			var recorded int64
			for _, op := range []string{"read", "write"} {
				if h := snap.Ops[op]; h != nil {
					recorded += h.Count()
				}
			}
			if recorded != ios || (tt.syncs > 0 && snap.Ops["sync"].Count() != tt.syncs) {
				t.Errorf("Recorder saw %d I/Os and %v syncs; want %d and %d", recorded, snap.Ops["sync"], ios, tt.syncs)
			}
			if fi, err := os.Stat(filepath.Join(dir, "t.0.0")); err != nil || fi.Size() != size {
				t.Errorf("file t.0.0: %v, %v; want %d bytes", fi, err, size)
			}
		})
	}
}

func TestNumjobsClonesFilesAndSeeds(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=n", "--size=256k", "--rw=randwrite", "--numjobs=3", "--direct=1")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := w.last()
	seeds := map[uint64]bool{}
	for i, c := range res.clones {
		if want := filepath.Join(dir, "n."+strconv.Itoa(i)+".0"); c.path != want {
			t.Errorf("clone %d path %s; want %s", i, c.path, want)
		}
		seeds[c.seed] = true
		if c.st.dir[dirWrite].ios != 64 {
			t.Errorf("clone %d wrote %d blocks; want 64", i, c.st.dir[dirWrite].ios)
		}
	}
	if len(seeds) != 3 {
		t.Errorf("clones share seeds: %v", seeds)
	}
}

func TestAlignmentRefusedBeforeAnyIO(t *testing.T) {
	dir := diskDir(t)
	lbs := deviceOf(beneath.Unconfined(dir)).lbs
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bs=1000"}, "bs=1000 is not a multiple of the logical block size"},
		{[]string{"--offset=100"}, "offset=100 is not a multiple of the logical block size"},
	}
	for _, tt := range tests {
		args := append([]string{"--name=a", "--size=64k", "--rw=write", "--direct=1"}, tt.args...)
		_, _, err := runArgs(t, dir, args...)
		if !errors.Is(err, ErrAlignment) || !strings.Contains(err.Error(), tt.want) ||
			!strings.Contains(err.Error(), "("+strconv.FormatUint(lbs, 10)+" bytes)") {
			t.Errorf("Run(%q) = %v; want ErrAlignment naming %q and %d bytes", args, err, tt.want, lbs)
		}
		if _, err := os.Stat(filepath.Join(dir, "a.0.0")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Run(%q) created a file before refusing: %v", args, err)
		}
	}
}

// TestTmpfsRefusesDirect uses the machine's real tmpfs (/dev/shm).
func TestTmpfsRefusesDirect(t *testing.T) {
	if !isTmpfs(beneath.Unconfined("/dev/shm")) {
		t.Fatal("/dev/shm is not tmpfs here; this test needs a tmpfs mount")
	}
	dir, err := os.MkdirTemp("/dev/shm", "wpfio-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	_, _, err = runArgs(t, dir, "--name=a", "--size=64k", "--rw=randwrite", "--direct=1")
	if !errors.Is(err, ErrDirectUnsupported) || !strings.Contains(err.Error(), "direct=0") {
		t.Errorf("Run(direct=1 on tmpfs) = %v; want ErrDirectUnsupported saying what to do", err)
	}
	// Buffered I/O works there.
	if _, _, err := runArgs(t, dir, "--name=b", "--size=64k", "--rw=randwrite"); err != nil {
		t.Errorf("Run(direct=0 on tmpfs) = %v", err)
	}
}

func TestCancelStopsWithinASecond(t *testing.T) {
	for _, engine := range []string{"libaio", "psync"} {
		t.Run(engine, func(t *testing.T) {
			dir := diskDir(t)
			spec, err := ParseArgs([]string{"--name=c", "--size=1m", "--rw=randwrite", "--direct=1",
				"--ioengine=" + engine, "--iodepth=8", "--time_based", "--runtime=60", "--fsync=16"})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := NewFromSpec(spec)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			err = w.Run(ctx, PhaseRun, workload.Env{DataDir: dir}, workload.NewRecorder(start))
			if took := time.Since(start); took > 1300*time.Millisecond || !errors.Is(err, context.Canceled) {
				t.Errorf("Run cancelled at 300ms returned %v after %v; want context.Canceled within 1.3s", err, took)
			}
			if st := totals(t, w); st.dir[dirWrite].ios == 0 {
				t.Error("cancelled run recorded no I/O")
			}
		})
	}
}

func TestRampTimeExcluded(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=r", "--size=1m", "--rw=randwrite", "--direct=1",
		"--time_based", "--runtime=400ms", "--ramp_time=400ms")
	if err != nil {
		t.Fatal(err)
	}
	if rt := totals(t, w).runtime; rt < 350*time.Millisecond || rt > 700*time.Millisecond {
		t.Errorf("runtime with ramp_time=400ms runtime=400ms = %v; want ~400ms", rt)
	}
}

func TestRateIOPS(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=r", "--size=1m", "--rw=randwrite", "--direct=1",
		"--time_based", "--runtime=1s", "--rate_iops=200")
	if err != nil {
		t.Fatal(err)
	}
	// The cap is the property: never above it. Below it only by what a
	// stalled disk or CPU can take on a loaded machine (158 seen at load
	// 20, when the rate's catch-up still waits on the stalled writes).
	if n := totals(t, w).dir[dirWrite].ios; n < 120 || n > 230 {
		t.Errorf("rate_iops=200 for 1s did %d writes; want ~200 (at most 230)", n)
	}
}

func TestUnknownPhase(t *testing.T) {
	spec, _ := ParseArgs([]string{"--name=x", "--size=4k"})
	w, _ := NewFromSpec(spec)
	if err := w.Run(context.Background(), "prepare", workload.Env{}, nil); err == nil {
		t.Error("Run(prepare) = nil; want an error")
	}
}

// TestStartsAtEnvStart: I/O begins at the phase's common start time, so
// that every worker's interval k covers the same slice of time.
func TestStartsAtEnvStart(t *testing.T) {
	dir := diskDir(t)
	spec, err := ParseArgs([]string{"--name=s", "--size=64k", "--rw=randwrite", "--direct=1"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := NewFromSpec(spec)
	start := time.Now().Add(300 * time.Millisecond)
	if err := w.Run(context.Background(), PhaseRun, workload.Env{DataDir: dir, Start: start}, nil); err != nil {
		t.Fatal(err)
	}
	if res, _ := w.last(); res.start.Before(start) {
		t.Errorf("I/O started at %v; want not before Env.Start %v", res.start, start)
	}
}
