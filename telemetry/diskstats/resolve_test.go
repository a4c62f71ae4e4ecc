package diskstats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestResolveThisMachine resolves paths and names on the real system: the
// repository's disk is /dev/vda here (ext4 on the whole disk).
func TestResolveThisMachine(t *testing.T) {
	r := DefaultResolver()
	devs, err := r.Paths("/var/tmp", t.TempDir(), filepath.Join(t.TempDir(), "not", "yet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || len(devs[0].Paths) != 3 || devs[0].Major == 0 {
		t.Fatalf("Paths() = %+v; want one device holding all three paths", devs)
	}
	byName, err := r.Names(devs[0].Name, "/dev/"+devs[0].Name)
	if err != nil || len(byName) != 1 || byName[0].Major != devs[0].Major || byName[0].Minor != devs[0].Minor {
		t.Errorf("Names(%s, /dev/%s) = %+v, %v; want %d:%d", devs[0].Name, devs[0].Name, byName, err, devs[0].Major, devs[0].Minor)
	}
	if _, err := r.Paths("/dev/shm"); !errors.Is(err, ErrNoBlockDevice) {
		t.Errorf("Paths(/dev/shm) error = %v; want ErrNoBlockDevice (tmpfs)", err)
	}
	if _, err := r.Names("no-such-disk"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Names(no-such-disk) error = %v; want ErrNoDevice", err)
	}
	m, err := r.MountOf("/var/tmp")
	if err != nil || m.FSType == "" || m.MountPoint == "" {
		t.Errorf("MountOf(/var/tmp) = %+v, %v", m, err)
	}
}

// TestResolveFakeTree resolves through a sysfs tree laid out like the
// kernel's: a partition inside its disk's directory, a dm device whose
// slave is that partition, and a tmpfs mount.
func TestResolveFakeTree(t *testing.T) {
	root := t.TempDir()
	sys := filepath.Join(root, "sys")
	mk := func(dir string, files map[string]string) {
		if err := os.MkdirAll(filepath.Join(sys, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(sys, dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(target, at string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sys, at)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(sys, at)); err != nil {
			t.Fatal(err)
		}
	}
	mk("devices/pci0/block/sda", map[string]string{"dev": "8:0\n"})
	mk("devices/pci0/block/sda/sda2", map[string]string{"dev": "8:2\n", "partition": "2\n"})
	mk("devices/virtual/block/dm-0", map[string]string{"dev": "253:0\n"})
	mk("devices/virtual/block/dm-0/slaves", nil)
	link("../../../../pci0/block/sda/sda2", "devices/virtual/block/dm-0/slaves/sda2")
	for name, target := range map[string]string{"8:0": "pci0/block/sda", "8:2": "pci0/block/sda/sda2", "253:0": "virtual/block/dm-0"} {
		link("../../devices/"+target, "dev/block/"+name)
		link("../../devices/"+target, "class/block/"+filepath.Base(target))
	}
	onPart, onDM, onTmp := dirs(t, root, "data", "lvm", "tmp")
	info := filepath.Join(root, "mountinfo")
	lines := []string{
		"22 1 254:0 / / rw - ext4 /dev/vda rw",
		fmt.Sprintf("30 22 8:2 / %s rw,noatime - xfs /dev/sda2 rw,attr2", onPart),
		fmt.Sprintf("31 22 253:0 / %s rw - ext4 /dev/mapper/vg-lv rw", onDM),
		fmt.Sprintf("32 22 0:45 / %s rw - tmpfs tmpfs rw", onTmp),
	}
	if err := os.WriteFile(info, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Resolver{SysDir: sys, MountInfo: info}
	devs, err := r.Paths(filepath.Join(onPart, "ibdata1"), onDM)
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Name: "sda", Major: 8, Minor: 0, Partition: "sda2", Paths: []string{filepath.Join(onPart, "ibdata1")}},
		{Name: "dm-0", Major: 253, Minor: 0, Slaves: []string{"sda"}, Paths: []string{onDM}},
	}
	if !reflect.DeepEqual(devs, want) {
		t.Errorf("Paths() =\n %+v; want\n %+v", devs, want)
	}
	if got := DeviceNames(devs, true); !reflect.DeepEqual(got, []string{"sda", "dm-0"}) {
		t.Errorf("DeviceNames(slaves) = %v; want [sda dm-0]", got)
	}
	if _, err := r.Paths(onTmp); !errors.Is(err, ErrNoBlockDevice) {
		t.Errorf("Paths(tmpfs) error = %v; want ErrNoBlockDevice", err)
	}
	part, err := r.Names("sda2")
	if err != nil || len(part) != 1 || part[0].Name != "sda2" || part[0].Minor != 2 {
		t.Errorf("Names(sda2) = %+v, %v; want the partition itself", part, err)
	}
}

func TestParseMountInfo(t *testing.T) {
	in := "36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n" +
		"37 35 0:45 / /run rw shared:2 propagation:x - tmpfs tmpfs rw,size=10k\n"
	got, err := ParseMountInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Mount{ID: 36, ParentID: 35, Major: 98, Root: "/mnt1", MountPoint: "/mnt two", Options: "rw,noatime",
		FSType: "ext3", Source: "/dev/root", SuperOptions: "rw,errors=continue"}
	if len(got) != 2 || got[0] != want || got[1].FSType != "tmpfs" || got[1].Minor != 45 {
		t.Errorf("ParseMountInfo() = %+v; want first %+v", got, want)
	}
	if opts := got[0].AllOptions(); !reflect.DeepEqual(opts, []string{"rw", "noatime", "errors=continue"}) {
		t.Errorf("AllOptions() = %v", opts)
	}
	for _, bad := range []string{"1 2 3", "x 1 8:0 / / rw - ext4 /dev/x rw", "1 1 8 / / rw - ext4 /dev/x rw", "1 1 8:0 / / rw ext4"} {
		if _, err := ParseMountInfo(strings.NewReader(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseMountInfo(%q) error = %v; want ErrFormat", bad, err)
		}
	}
	b, err := os.ReadFile("testdata/mountinfo-vda.txt")
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := ParseMountInfo(strings.NewReader(string(b)))
	if m, ok := mountFor(mounts, "/var/tmp"); err != nil || !ok || m.Source != "/dev/vda" || m.FSType != "ext4" {
		t.Errorf("mountFor(this machine, /var/tmp) = %+v, %v, %v; want ext4 on /dev/vda", m, ok, err)
	}
}

func TestDevNumbers(t *testing.T) {
	tests := []struct {
		dev      uint64
		maj, min uint32
	}{
		{0xfe00, 254, 0}, {0x0802, 8, 2},
	}
	for _, tt := range tests {
		if maj, min := devNumbers(tt.dev); maj != tt.maj || min != tt.min {
			t.Errorf("devNumbers(%#x) = %d:%d; want %d:%d", tt.dev, maj, min, tt.maj, tt.min)
		}
	}
	// Large numbers use the high bits: makedev(300, 70000).
	dev := uint64(70000&0xff) | uint64(300&0xfff)<<8 | uint64(70000&^0xff)<<12 | uint64(300&^0xfff)<<32
	if maj, min := devNumbers(dev); maj != 300 || min != 70000 {
		t.Errorf("devNumbers(makedev(300,70000)) = %d:%d", maj, min)
	}
}

func dirs(t *testing.T, root string, names ...string) (string, string, string) {
	t.Helper()
	var out []string
	for _, n := range names {
		p := filepath.Join(root, n)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, real)
	}
	return out[0], out[1], out[2]
}
