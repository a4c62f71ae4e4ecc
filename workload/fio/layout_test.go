package fio

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// unwritten reports whether filefrag shows unwritten extents in path.
func unwritten(t *testing.T, path string) bool {
	t.Helper()
	out, err := exec.Command("filefrag", "-v", path).CombinedOutput()
	if err != nil {
		t.Fatalf("filefrag -v %s: %v\n%s", path, err, out)
	}
	return strings.Contains(string(out), "unwritten")
}

// fioCreate lays a file out with the real fio 3.33 (create_only=1).
func fioCreate(t *testing.T, dir string, args ...string) string {
	t.Helper()
	all := append([]string{"--name=f", "--size=1m", "--create_only=1", "--directory=" + dir}, args...)
	if out, err := exec.Command("fio", all...).CombinedOutput(); err != nil {
		t.Fatalf("fio %q: %v\n%s", all, err, out)
	}
	return filepath.Join(dir, "f.0.0")
}

// TestLayoutMatchesFio lays the same job out with fio and with us and
// compares what the filesystem holds: fallocated unwritten extents for a
// write job on a new file, written data for a read job.
func TestLayoutMatchesFio(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		wantUnwritten bool
		wantNote      string
	}{
		{"randwrite new file", []string{"--rw=randwrite"}, true, "fallocate native reserved"},
		{"write overwrite=1", []string{"--rw=write", "--overwrite=1"}, false, "wrote 1048576 bytes"},
		{"randread new file", []string{"--rw=randread"}, false, "wrote 1048576 bytes"},
		{"randrw new file", []string{"--rw=randrw"}, false, "wrote 1048576 bytes"},
		{"randwrite fallocate=none", []string{"--rw=randwrite", "--fallocate=none"}, false, "no space reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fioDir, ourDir := diskDir(t), diskDir(t)
			fioFile := fioCreate(t, fioDir, tt.args...)
			c := layoutClone(t, ourDir, tt.args...)
			notes, err := layout(context.Background(), c)
			if err != nil {
				t.Fatalf("layout(%q) = %v", tt.args, err)
			}
			if got, fioGot := unwritten(t, c.path), unwritten(t, fioFile); got != fioGot || got != tt.wantUnwritten {
				t.Errorf("layout(%q): unwritten extents %v, fio's %v; want %v", tt.args, got, fioGot, tt.wantUnwritten)
			}
			if !strings.Contains(strings.Join(notes, "\n"), "Laying out IO file (1 file / 1MiB)") ||
				!strings.Contains(strings.Join(notes, "\n"), tt.wantNote) {
				t.Errorf("layout(%q) notes %q; want fio's line and %q", tt.args, notes, tt.wantNote)
			}
		})
	}
}

// TestLayoutReusesFileOfRightSize: an existing file at least offset+size
// long is used as it is (same inode, same data), as in fio.
func TestLayoutReusesFileOfRightSize(t *testing.T) {
	dir := diskDir(t)
	c := layoutClone(t, dir, "--rw=randwrite")
	if _, err := layout(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	before := inode(t, c.path)
	notes, err := layout(context.Background(), layoutClone(t, dir, "--rw=randread"))
	if err != nil || inode(t, c.path) != before || !strings.Contains(notes[0], "used as is") {
		t.Errorf("second layout: %q, %v; inode %d -> %d; want the file reused", notes, err, before, inode(t, c.path))
	}
	// A smaller file is laid out again.
	small := layoutClone(t, dir, "--rw=randwrite", "--size=2m")
	notes, err = layout(context.Background(), small)
	if fi, _ := os.Stat(small.path); err != nil || fi.Size() != 2<<20 || !strings.Contains(notes[0], "Laying out") {
		t.Errorf("layout of a bigger job over a 1m file: %q, %v; want a 2m file laid out", notes, err)
	}
}

func layoutClone(t *testing.T, dir string, args ...string) *clone {
	t.Helper()
	spec, err := ParseArgs(append([]string{"--name=f", "--size=1m"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	clones, _, err := plan(spec, envFor(dir))
	if err != nil {
		t.Fatal(err)
	}
	return clones[0]
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestLayoutLeavesDevices: a filename that is not a regular file (a block
// device, whose Stat size is 0) is used as it is, as fio does; laying it
// out unlinked the device node and wrote a regular file in its place.
func TestLayoutLeavesDevices(t *testing.T) {
	dir := t.TempDir()
	node := dir + "/node"
	if err := syscall.Mkfifo(node, 0o600); err != nil {
		t.Fatal(err)
	}
	before := inode(t, node)
	notes, err := layout(context.Background(), layoutClone(t, dir, "--rw=randwrite", "--filename="+node))
	fi, serr := os.Stat(node)
	if err != nil || serr != nil || fi.Mode()&os.ModeNamedPipe == 0 || inode(t, node) != before || !strings.Contains(notes[0], "used as is") {
		t.Errorf("layout over a non-regular file: %q, %v; want it left alone", notes, err)
	}
}
