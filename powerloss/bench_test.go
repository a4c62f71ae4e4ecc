package powerloss

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
)

// BenchmarkOverheadFio runs the same fio job (4 KiB random writes, O_DIRECT,
// fsync after every write: the redo-log pattern) directly on the disk and
// through the layer, on the same file system, and reports both and their
// ratio. One run of each whatever b.N is; use -benchtime 1x.
// POWERLOSS_BENCH_RUNTIME sets each run's length (default 10s).
func BenchmarkOverheadFio(b *testing.B) {
	fio := testenv.Fio(b)
	runtime := os.Getenv("POWERLOSS_BENCH_RUNTIME")
	if runtime == "" {
		runtime = "10s"
	}
	dir := b.TempDir()
	direct, backing, mnt := filepath.Join(dir, "direct"), filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	for _, d := range []string{direct, backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		native := runFio(b, fio, direct, runtime)
		layered := runFioLayer(b, fio, backing, mnt, runtime)
		b.ReportMetric(native.IOPS, "iops-direct")
		b.ReportMetric(layered.IOPS, "iops-layer")
		b.ReportMetric(layered.IOPS/native.IOPS, "iops-ratio")
		b.ReportMetric(native.Sync99, "fsync-p99us-direct")
		b.ReportMetric(layered.Sync99, "fsync-p99us-layer")
		fmt.Printf("fio randwrite 4k direct=1 fsync=1 psync, %s each, same file system (%s)\n", runtime, dir)
		fmt.Printf("  %-7s %8s %11s %11s %11s %11s\n", "", "IOPS", "write p50", "write p99", "fsync p50", "fsync p99")
		for _, r := range []struct {
			name string
			fioResult
		}{{"direct", native}, {"layer", layered}} {
			fmt.Printf("  %-7s %8.0f %8.0f us %8.0f us %8.0f us %8.0f us\n", r.name, r.IOPS, r.Write50, r.Write99, r.Sync50, r.Sync99)
		}
		fmt.Printf("  layer/direct: IOPS x%.2f, write p99 x%.2f, fsync p99 x%.2f\n",
			layered.IOPS/native.IOPS, layered.Write99/native.Write99, layered.Sync99/native.Sync99)
	}
}

func runFioLayer(b *testing.B, fio, backing, mnt, runtime string) fioResult {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := MountConfig(ctx, Config{Exe: exe, Env: serverEnv, Backing: backing, Mountpoint: mnt})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	r := runFio(b, fio, mnt, runtime)
	s, err := m.Stats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("  layer saw %d writes, %d fsyncs, %d dirty bytes at the end\n", s.Writes, s.Fsyncs, s.DirtyBytes)
	return r
}

// fioResult is one run's write IOPS and fio's own percentiles (µs) of the
// write completion latency and of the fsync latency.
type fioResult struct {
	IOPS                             float64
	Write50, Write99, Sync50, Sync99 float64
}

func runFio(b *testing.B, fio, dir, runtime string) fioResult {
	out, err := exec.Command(fio, "--name=powerloss", "--directory="+dir, "--rw=randwrite",
		"--bs=4k", "--size=64m", "--direct=1", "--fsync=1", "--ioengine=psync",
		"--time_based", "--runtime="+runtime, "--output-format=json").Output()
	if err != nil {
		b.Fatalf("fio in %s: %v: %s", dir, err, out)
	}
	var rep struct {
		Jobs []struct {
			Write struct {
				IOPS float64 `json:"iops"`
				Clat struct {
					Pct map[string]float64 `json:"percentile"`
				} `json:"clat_ns"`
			} `json:"write"`
			Sync struct {
				Lat struct {
					Pct map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Jobs) != 1 {
		b.Fatalf("fio JSON from %s: %v", dir, err)
	}
	j := rep.Jobs[0]
	const p50, p99 = "50.000000", "99.000000"
	return fioResult{IOPS: j.Write.IOPS,
		Write50: j.Write.Clat.Pct[p50] / 1e3, Write99: j.Write.Clat.Pct[p99] / 1e3,
		Sync50: j.Sync.Lat.Pct[p50] / 1e3, Sync99: j.Sync.Lat.Pct[p99] / 1e3}
}
