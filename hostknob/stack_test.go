package hostknob

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fakeStack lays out a sysfs tree like the kernel's for LVM over two
// disks: dm-0 with slaves sda (through partition sda2) and sdb, each disk
// with a queue directory of plain files, and a mountinfo with an ext4 on
// dm-0 at the returned directory.
func fakeStack(t *testing.T) (sys, info, dir string) {
	root := t.TempDir()
	sys = filepath.Join(root, "sys")
	mk := func(d string, files map[string]string) {
		if err := os.MkdirAll(filepath.Join(sys, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(sys, d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(target, at string) {
		os.MkdirAll(filepath.Dir(filepath.Join(sys, at)), 0o755)
		if err := os.Symlink(target, filepath.Join(sys, at)); err != nil {
			t.Fatal(err)
		}
	}
	queue := map[string]string{"scheduler": "none [mq-deadline] kyber\n", "nr_requests": "256\n", "read_ahead_kb": "128\n", "wbt_lat_usec": "2000\n"}
	mk("devices/pci0/block/sda", map[string]string{"dev": "8:0\n"})
	mk("devices/pci0/block/sda/queue", queue)
	mk("devices/pci0/block/sda/mq/0", map[string]string{"nr_tags": "64\n"})
	mk("devices/pci0/block/sda/sda2", map[string]string{"dev": "8:2\n", "partition": "2\n"})
	mk("devices/pci0/block/sdb", map[string]string{"dev": "8:16\n"})
	mk("devices/pci0/block/sdb/queue", queue)
	mk("devices/virtual/block/dm-0", map[string]string{"dev": "253:0\n"})
	mk("devices/virtual/block/dm-0/queue", map[string]string{"scheduler": "none\n", "read_ahead_kb": "4096\n"})
	link("../../../../pci0/block/sda/sda2", "devices/virtual/block/dm-0/slaves/sda2")
	link("../../../../pci0/block/sdb", "devices/virtual/block/dm-0/slaves/sdb")
	for name, target := range map[string]string{"8:0": "pci0/block/sda", "8:2": "pci0/block/sda/sda2", "8:16": "pci0/block/sdb", "253:0": "virtual/block/dm-0"} {
		link("../../devices/"+target, "dev/block/"+name)
		link("../../devices/"+target, "class/block/"+filepath.Base(target))
	}
	dir = filepath.Join(root, "data")
	os.Mkdir(dir, 0o755)
	dir, _ = filepath.EvalSymlinks(dir)
	info = filepath.Join(root, "mountinfo")
	os.WriteFile(info, []byte(fmt.Sprintf("22 1 254:0 / / rw - ext4 /dev/vda rw\n31 22 253:0 / %s rw,relatime - ext4 /dev/mapper/vg-lv rw\n", dir)), 0o644)
	return sys, info, dir
}

// TestStackTargets: under dm (LVM), request-queue knobs go to every disk
// at the bottom (a partition's to its disk), readahead to the dm device;
// a restore puts each file back. The tree is fake (plain files): this
// kernel has no device-mapper to build the real one.
func TestStackTargets(t *testing.T) {
	sys, info, dir := fakeStack(t)
	h, err := Open(Config{Dir: dir, Allow: AllowAll(), SysDir: sys, MountInfo: info, LockDir: t.TempDir(), JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Check(settings("scheduler=none", "nr_requests=100")); err == nil {
		t.Errorf("nr_requests=100 under scheduler none with 64 tags on sda: accepted")
	}
	a, err := h.Apply(settings("scheduler=kyber", "read_ahead_kb=512"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range a.Results() {
		got = append(got, r.Knob+"@"+r.Target+"="+r.Read)
	}
	want := fmt.Sprint([]string{"scheduler@sda=kyber", "scheduler@sdb=kyber", "read_ahead_kb@dm-0=512"})
	if fmt.Sprint(got) != want {
		t.Errorf("results %v; want %v", got, want)
	}
	if err := a.Restore(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"devices/pci0/block/sda/queue/read_ahead_kb", "devices/pci0/block/sdb/queue/nr_requests"} {
		if b, _ := os.ReadFile(filepath.Join(sys, f)); string(b) != "128\n" && string(b) != "256\n" {
			t.Errorf("%s = %q after restore", f, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sys, "devices/virtual/block/dm-0/queue/read_ahead_kb")); string(b) != "4096" && string(b) != "4096\n" {
		t.Errorf("dm-0 read_ahead_kb = %q after restore; want 4096", b)
	}
	if b, _ := os.ReadFile(filepath.Join(sys, "devices/pci0/block/sda/queue/scheduler")); string(b) != "mq-deadline" {
		t.Errorf("sda scheduler file = %q after restore; want mq-deadline written back", b)
	}
}
