package blockdev

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// TestProbeThisMachine probes the disk the repository lives on (a virtio
// disk here: logical 512, physical 4096, no model) and checks every value
// against the sysfs files it came from.
func TestProbeThisMachine(t *testing.T) {
	devs, err := diskstats.DefaultResolver().Paths(".")
	if err != nil || len(devs) != 1 {
		t.Fatalf("Paths(.) = %v, %v", devs, err)
	}
	info, err := Probe(devs[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	q := filepath.Join("/sys/class/block", info.Disk, "queue")
	if got := readInt(t, q, "logical_block_size"); info.LogicalBlockSize != got || got < 512 {
		t.Errorf("LogicalBlockSize = %d; sysfs says %d", info.LogicalBlockSize, got)
	}
	if got := readInt(t, q, "physical_block_size"); info.PhysicalBlockSize != got || got < info.LogicalBlockSize {
		t.Errorf("PhysicalBlockSize = %d; sysfs says %d", info.PhysicalBlockSize, got)
	}
	if got := readInt(t, q, "nr_requests"); int64(info.NrRequests) != got || got <= 0 {
		t.Errorf("NrRequests = %d; sysfs says %d", info.NrRequests, got)
	}
	if info.Scheduler == "" || len(info.Schedulers) == 0 || info.WriteCache == "" {
		t.Errorf("Probe(%s) = %+v; want scheduler, choices and write cache", devs[0].Name, info)
	}
	t.Logf("Probe(%s) = %+v", devs[0].Name, info)
}

// TestProbePartitionUsesDisk probes a fake sysfs partition and checks its
// queue settings come from the parent disk.
func TestProbePartitionUsesDisk(t *testing.T) {
	sys := t.TempDir()
	disk := filepath.Join(sys, "devices", "pci0", "nvme", "nvme0", "nvme0n1")
	write(t, filepath.Join(disk, "queue"), map[string]string{
		"logical_block_size": "512\n", "physical_block_size": "4096\n", "minimum_io_size": "4096\n", "optimal_io_size": "0\n",
		"scheduler": "[none] mq-deadline\n", "nr_requests": "1023\n", "rotational": "0\n", "write_cache": "write back\n",
		"nomerges": "2\n", "max_sectors_kb": "128\n"})
	write(t, filepath.Join(disk, "device"), map[string]string{"model": "Samsung SSD 980 PRO 1TB          \n"})
	write(t, filepath.Join(disk, "nvme0n1p2"), map[string]string{"partition": "2\n"})
	for name, target := range map[string]string{"nvme0n1": disk, "nvme0n1p2": filepath.Join(disk, "nvme0n1p2")} {
		link := filepath.Join(sys, "class", "block", name)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Prober{SysDir: sys}.Probe("/dev/nvme0n1p2")
	want := Info{Name: "nvme0n1p2", Disk: "nvme0n1", LogicalBlockSize: 512, PhysicalBlockSize: 4096, MinIOSize: 4096,
		Scheduler: "none", Schedulers: []string{"none", "mq-deadline"}, NrRequests: 1023, WriteCache: "write back",
		NoMerges: 2, MaxSectorsKB: 128, Model: "Samsung SSD 980 PRO 1TB"}
	if err != nil || !reflect.DeepEqual(got, want) || !got.NVMe() {
		t.Errorf("Probe(nvme0n1p2) = %+v, %v; want %+v", got, err, want)
	}
	if _, err := (Prober{SysDir: sys}).Probe("sdz"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Probe(sdz) error = %v; want ErrNoDevice", err)
	}
}

func TestParseScheduler(t *testing.T) {
	tests := []struct {
		in      string
		active  string
		choices []string
	}{
		{"none [mq-deadline] kyber bfq", "mq-deadline", []string{"none", "mq-deadline", "kyber", "bfq"}},
		{"[none] mq-deadline", "none", []string{"none", "mq-deadline"}},
		{"none", "none", []string{"none"}},
		{"", "", nil},
	}
	for _, tt := range tests {
		a, c := ParseScheduler(tt.in)
		if a != tt.active || !reflect.DeepEqual(c, tt.choices) {
			t.Errorf("ParseScheduler(%q) = %q, %v; want %q, %v", tt.in, a, c, tt.active, tt.choices)
		}
	}
}

func TestFilesystemOfThisMachine(t *testing.T) {
	fs, err := FilesystemOf(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if fs.FSType == "" || fs.Device == "" || !fs.HasOption("rw") {
		t.Errorf("FilesystemOf(tempdir) = %+v; want a type, a device and rw", fs)
	}
	t.Logf("FilesystemOf(tempdir) = %+v", fs)
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readInt(t *testing.T, dir, name string) int64 {
	t.Helper()
	var v int64
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b {
		if c >= '0' && c <= '9' {
			v = v*10 + int64(c-'0')
		}
	}
	return v
}
