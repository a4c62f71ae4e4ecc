package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/internal/hosttest"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
)

// throttled returns the loop devices with a write IOPS rule in the root
// blkio cgroup.
func throttled(t *testing.T) []string {
	b, err := os.ReadFile("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[0], "7:") {
			out = append(out, f[0])
		}
	}
	return out
}

func mountedAt(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// TestWorkerKilledDiskRestored: a worker process killed with -9 while a
// disk profile caps its loop filesystem leaves the throttle rule and the
// mount in place; the next worker started on the same data directory
// (without --allow-disk) restores both before it serves.
func TestWorkerKilledDiskRestored(t *testing.T) {
	hosttest.NeedRoot(t)
	if _, err := os.Stat("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device"); err != nil {
		t.Skip("no cgroup v1 blkio throttling here")
	}
	before := throttled(t)
	dataDir := t.TempDir()
	dataDir, _ = filepath.EvalSymlinks(dataDir)
	mnt := filepath.Join(dataDir, "disk")
	t.Cleanup(func() { // a safety net: the test must leave nothing behind
		for _, dev := range throttled(t) {
			if !strings.Contains(strings.Join(before, " "), dev) {
				t.Errorf("rule left on %s", dev)
				os.WriteFile("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device", []byte(dev+" 0"), 0)
				os.WriteFile("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device", []byte(dev+" 0"), 0)
			}
		}
		if mountedAt(mnt) {
			t.Errorf("%s left mounted", mnt)
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	addr := serveCoordinator(t, serveFlags{}).addr
	conn := connFlags{coordinator: addr}
	cl, err := conn.dial("")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w1 := startChild(t, "worker", "--coordinator", addr, "--name", "k9", "--data-dir", dataDir, "--allow-disk", "loop")

	meta, _ := workload.ByName("fio")
	b, err := meta.FromArgs([]string{"--name=k", "--directory=disk", "--rw=randwrite", "--bs=4k", "--direct=1",
		"--size=16M", "--time_based", "--runtime=60"})
	if err != nil {
		t.Fatal(err)
	}
	disk, err := diskSpec("custom,baseline_iops=500,size=128M")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitFor(t, ctx, "the worker to connect", func() bool {
		ws, _ := cl.Workers(ctx)
		return len(ws) > 0
	})
	runErr := make(chan error, 1)
	go func() {
		_, err := cl.Run(ctx, &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: meta.Kind, Value: b}, Disk: disk}, nil)
		runErr <- err
	}()
	waitFor(t, ctx, "the cap in force", func() bool {
		select {
		case err := <-runErr:
			t.Fatalf("run ended before the kill: %v", err)
		default:
		}
		return len(throttled(t)) > len(before) && mountedAt(mnt)
	})
	if err := w1.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w1.Wait()
	if len(throttled(t)) == len(before) || !mountedAt(mnt) {
		t.Fatal("the rule or the mount went with the killed worker: nothing to restore")
	}
	w2 := startChild(t, "worker", "--coordinator", addr, "--name", "k9b", "--data-dir", dataDir)
	waitFor(t, ctx, "the next worker to restore", func() bool { return len(throttled(t)) == len(before) && !mountedAt(mnt) })
	w2.Process.Signal(syscall.SIGTERM)
	w2.Wait() // SIGTERM stops it (exit status 143)
	if b, _ := os.ReadFile(filepath.Join(dataDir, ".writepath-host.journal")); len(b) != 0 {
		t.Errorf("journal not emptied: %s", b)
	}
}

// TestDiskProfileRefusedAtSubmit: a run with a disk profile is refused,
// in one line naming the worker's missing opt-in, before anything runs.
func TestDiskProfileRefusedAtSubmit(t *testing.T) {
	addr := serveCoordinator(t, serveFlags{}).addr
	conn := connFlags{coordinator: addr}
	cl, err := conn.dial("")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := worker.New(worker.Config{Coordinator: addr, Name: "plain", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, ctx, "the worker to connect", func() bool {
		ws, _ := cl.Workers(ctx)
		return len(ws) > 0
	})
	meta, _ := workload.ByName("fio")
	b, err := meta.FromArgs([]string{"--name=k", "--rw=write", "--size=1M"})
	if err != nil {
		t.Fatal(err)
	}
	disk, _ := diskSpec("capacity")
	_, err = cl.Run(ctx, &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: meta.Kind, Value: b}, Disk: disk}, nil)
	if err == nil || !strings.Contains(err.Error(), "--allow-disk") || strings.Contains(err.Error(), "\n") {
		t.Errorf("run with a disk profile on a worker without --allow-disk: %v; want one line naming --allow-disk", err)
	}
}
