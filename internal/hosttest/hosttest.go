// Package hosttest gives tests host resources they may change: a loop
// device over a sparse file in the test's temporary directory (optionally
// under a dm-linear device) with a fresh filesystem mounted, and a saved
// copy of the vm sysctls put back when the test ends, also when it fails.
// Tests never change the machine's own disks or remount its root.
package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Options shape a test filesystem.
type Options struct {
	// SizeMiB is the backing file's size; 0 means 64.
	SizeMiB int
	// FS is the filesystem to make; "" means ext4.
	FS string
	// MountOptions are passed to mount -o.
	MountOptions string
	// DM stacks a dm-linear device on the loop device, as LVM would.
	DM bool
}

// FS is a mounted test filesystem.
type FS struct {
	Dir  string // mount point
	Loop string // the loop device's kernel name ("loop3")
	DM   string // the dm device's kernel name ("dm-1"), with Options.DM
	Node string // the device node mounted
}

// NeedRoot skips a test that changes host settings when not run as root.
// CI runs as root, so there it always runs.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changes block devices and sysctls: needs root")
	}
}

// NeedDeviceMapper skips a test that stacks dm devices on a kernel
// without device-mapper (this project's reference VM has none; the
// stacking logic is also tested on a fake sysfs tree).
func NeedDeviceMapper(t testing.TB) {
	t.Helper()
	NeedRoot(t)
	if err := exec.Command("dmsetup", "version").Run(); err != nil {
		t.Skip("no device-mapper in this kernel (dmsetup version fails)")
	}
}

// NewFS makes a loop device over a sparse file, a filesystem on it and
// mounts it in a temporary directory; cleanup unmounts and detaches.
func NewFS(t testing.TB, o Options) *FS {
	t.Helper()
	NeedRoot(t)
	if o.SizeMiB == 0 {
		o.SizeMiB = 64
	}
	if o.FS == "" {
		o.FS = "ext4"
	}
	base := t.TempDir()
	img := filepath.Join(base, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, int64(o.SizeMiB)<<20); err != nil {
		t.Fatal(err)
	}
	node := strings.TrimSpace(run(t, "losetup", "--find", "--show", img))
	fs := &FS{Loop: filepath.Base(node), Node: node, Dir: filepath.Join(base, "mnt")}
	t.Cleanup(func() { runQuiet("losetup", "-d", node) })
	if o.DM {
		name := fmt.Sprintf("wptest-%d-%s", os.Getpid(), fs.Loop)
		sectors := int64(o.SizeMiB) << 11
		run(t, "dmsetup", "create", name, "--table", fmt.Sprintf("0 %d linear %s 0", sectors, node))
		t.Cleanup(func() { retry(func() error { return runQuiet("dmsetup", "remove", name) }) })
		fs.Node = "/dev/mapper/" + name
		target, err := filepath.EvalSymlinks(fs.Node)
		if err != nil {
			t.Fatal(err)
		}
		fs.DM = filepath.Base(target)
	}
	run(t, "mkfs."+o.FS, "-q", fs.Node)
	if err := os.Mkdir(fs.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{fs.Node, fs.Dir}
	if o.MountOptions != "" {
		args = append([]string{"-o", o.MountOptions}, args...)
	}
	run(t, "mount", args...)
	t.Cleanup(func() { retry(func() error { return runQuiet("umount", fs.Dir) }) })
	return fs
}

// QueueAttr reads /sys/class/block/<dev>/queue/<attr>, trimmed.
func QueueAttr(t testing.TB, dev, attr string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/block", dev, "queue", attr))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func runQuiet(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// retry tries a teardown a few times: a device is busy for a moment
// after the last file on it closes.
func retry(f func() error) {
	for range 20 {
		if f() == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
