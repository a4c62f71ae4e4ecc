package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// fakeDiskstats writes a /proc/diskstats with one device whose write count
// is writes.
func fakeDiskstats(t testing.TB, path string, writes int) {
	t.Helper()
	line := "254       0 vda 100 0 800 50 " + strconv.Itoa(writes) + " 0 " + strconv.Itoa(8*writes) + " 10 0 40 60 0 0 0 0 3 1\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiskTelemetryBaselineIsPhaseStart: writes before Start are not
// counted; each phase has its own baseline.
func TestDiskTelemetryBaselineIsPhaseStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diskstats")
	fakeDiskstats(t, path, 1000)
	dt, err := NewDiskTelemetry(path, []string{"vda"})
	if err != nil {
		t.Fatal(err)
	}
	fakeDiskstats(t, path, 5000) // idle time between construction and the phase
	p1, err := dt.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p1.(interface{ Close() error }).Close()
	fakeDiskstats(t, path, 5300)
	devs, _ := p1.Sample(time.Now())
	if len(devs) != 1 || devs[0].Delta.WriteIOs != 300 || devs[0].Window <= 0 {
		t.Errorf("first sample of the phase = %+v; want 300 writes since Start", devs)
	}
	if devs, _ := dt.Sample(time.Now()); devs != nil {
		t.Errorf("Sample without Start = %+v; want nothing", devs)
	}
}

func TestNewDiskTelemetryFailsOnMissingDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diskstats")
	fakeDiskstats(t, path, 1)
	if _, err := NewDiskTelemetry(path, []string{"sdz"}); err == nil {
		t.Errorf("NewDiskTelemetry(sdz) = nil error; want the missing device named")
	}
}

// BenchmarkTelemetryInterval is the worker's whole per-interval telemetry
// cost: read and parse /proc/diskstats for the disk behind a temporary
// directory (and its slaves), compute every iostat -x column and build the
// proto sent with the interval. At one interval a second, ns/op divided by
// 1e7 is the percentage of one core.
func BenchmarkTelemetryInterval(b *testing.B) {
	devs, err := diskstats.DefaultResolver().Paths(b.TempDir())
	if err != nil {
		b.Skipf("no block device behind the temporary directory: %v", err)
	}
	dt, err := NewDiskTelemetry(diskstats.DefaultPath, diskstats.DeviceNames(devs, true))
	if err != nil {
		b.Fatal(err)
	}
	pt, err := dt.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer pt.(interface{ Close() error }).Close()
	b.ReportAllocs()
	for b.Loop() {
		if telemetryProto(pt, time.Now()) == nil {
			b.Fatal("no telemetry")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "%core@1s")
}

// BenchmarkDiskSample is the sampling alone (no proto): it must not
// allocate.
func BenchmarkDiskSample(b *testing.B) {
	devs, err := diskstats.DefaultResolver().Paths(b.TempDir())
	if err != nil {
		b.Skipf("no block device behind the temporary directory: %v", err)
	}
	dt, err := NewDiskTelemetry(diskstats.DefaultPath, diskstats.DeviceNames(devs, true))
	if err != nil {
		b.Fatal(err)
	}
	pt, _ := dt.Start()
	defer pt.(interface{ Close() error }).Close()
	b.ReportAllocs()
	for b.Loop() {
		pt.Sample(time.Time{})
	}
}
