package fio

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/workload"
)

// diskDir is a temporary directory on a disk-backed filesystem (/var/tmp),
// where O_DIRECT works; tests of direct I/O must not land on tmpfs.
func diskDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "wpfio-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil || fs.Type == unix.TMPFS_MAGIC {
		t.Fatalf("%s is not disk-backed (statfs type %#x, %v); direct I/O tests need a real disk", dir, fs.Type, err)
	}
	return dir
}

// runArgs parses fio arguments, runs them in dir and returns the workload
// and the Recorder's single interval covering the whole run.
func runArgs(t *testing.T, dir string, args ...string) (*Workload, workload.Snapshot, error) {
	t.Helper()
	spec, err := ParseArgs(args)
	if err != nil {
		t.Fatalf("ParseArgs(%q) = %v", args, err)
	}
	w, err := NewFromSpec(spec)
	if err != nil {
		t.Fatalf("NewFromSpec(%q) = %v", args, err)
	}
	rec := workload.NewRecorder(time.Now())
	err = w.Run(context.Background(), PhaseRun, workload.Env{DataDir: dir}, rec)
	return w, rec.Tick(time.Now()), err
}

// totals sums a run's clones.
func totals(t *testing.T, w *Workload) *jobStats {
	t.Helper()
	res, err := w.last()
	if err != nil {
		t.Fatal(err)
	}
	st := newJobStats()
	st.jobs = 0
	for _, c := range res.clones {
		if err := st.merge(c.st, false); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func envFor(dir string) workload.Env { return workload.Env{DataDir: dir} }

// atomicFalse is a stop flag that is never raised.
type atomicFalse struct{ atomic.Bool }
