package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
)

// TestLatTargetSteps walks latency_target's search through windows that
// pass (S) or fail (F); the depths after each are fio 3.33's, worked
// from io_u.c's lat_target_success and __lat_target_failed.
func TestLatTargetSteps(t *testing.T) {
	tests := []struct {
		name     string
		iodepth  int
		run      bool
		outcomes string
		depths   []int
		final    int // window index (0-based) that restarts the statistics; -1 none
		done     int // window index after which the job ends; -1 none
	}{
		{"doubles to iodepth, one final window", 32, false, "SSSSSSS", []int{2, 4, 8, 16, 32, 32, 32}, 5, 6},
		{"bisects after the first failure", 32, false, "SSSSFSSSS", []int{2, 4, 8, 16, 12, 14, 15, 15, 15}, 7, 8},
		{"clamped at an iodepth no power of two", 5, false, "SSSSS", []int{2, 4, 5, 5, 5}, 3, 4},
		{"failing at depth 1 stays there", 8, false, "FFS", []int{1, 1, 2}, -1, -1},
		{"settles at 1", 8, false, "SFSS", []int{2, 1, 1, 1}, 2, 3},
		{"latency_run keeps searching", 5, true, "SSSSSS", []int{2, 4, 5, 5, 5, 5}, -1, -1},
		{"a final window that fails searches on", 32, false, "SSSSSSFS", []int{2, 4, 8, 16, 32, 32, 31, 32}, 5, -1},
	}
	for _, tt := range tests {
		l := &latTarget{iodepth: tt.iodepth, run: tt.run, qd: 1, low: 1, high: tt.iodepth}
		final, done := -1, -1
		for i, o := range tt.outcomes {
			_, restart, _ := l.decide(o == 'S')
			if restart && final < 0 {
				final = i
			}
			if l.done && done < 0 {
				done = i
			}
			if l.qd != tt.depths[i] {
				t.Errorf("%s: window %d (%c): depth %d; want %d", tt.name, i, o, l.qd, tt.depths[i])
			}
		}
		if final != tt.final || done != tt.done {
			t.Errorf("%s: final window %d, done after %d; want %d, %d", tt.name, final, done, tt.final, tt.done)
		}
	}
}

func TestLatencyOptions(t *testing.T) {
	spec, err := ParseArgs([]string{"--name=a", "--size=1m", "--latency_target=2ms", "--latency_window=500ms",
		"--latency_percentile=99.5", "--latency_run=1", "--max_latency=100,2ms"})
	if err != nil {
		t.Fatal(err)
	}
	j := spec.Jobs[0]
	if j.LatencyTargetNs != 2e6 || j.LatencyWindowNs != 500e6 || latPercentile(j) != 99.5 || !j.LatencyRun {
		t.Errorf("latency options = %d ns, %d ns, %v, %v; want 2ms, 500ms, 99.5, run", j.LatencyTargetNs, j.LatencyWindowNs, latPercentile(j), j.LatencyRun)
	}
	// a bare number is µs (fio's is_time options); R,W as bs=
	if len(j.MaxLatencyNs) != 3 || j.MaxLatencyNs[0] != 100e3 || j.MaxLatencyNs[1] != 2e6 || j.MaxLatencyNs[2] != 0 {
		t.Errorf("max_latency=100,2ms = %v ns; want [100000 2000000 0]", j.MaxLatencyNs)
	}
	if spec, _ := ParseArgs([]string{"--name=a", "--size=1m"}); latPercentile(spec.Jobs[0]) != 100 {
		t.Errorf("latency_percentile default %v; want fio's 100", latPercentile(spec.Jobs[0]))
	}
	for _, bad := range []string{"--latency_percentile=101", "--latency_percentile=-1", "--latency_percentile=x"} {
		if _, err := ParseArgs([]string{"--name=a", "--size=1m", bad}); err == nil {
			t.Errorf("%s accepted; fio refuses it", bad)
		}
	}
}

// latJob is the part of fio's JSON job this compares.
type latJob struct {
	Error   int     `json:"error"`
	Depth   int     `json:"latency_depth"`
	Target  uint64  `json:"latency_target"`
	Pct     float64 `json:"latency_percentile"`
	Window  uint64  `json:"latency_window"`
	Runtime int64   `json:"job_runtime"`
}

func decodeLatJob(t *testing.T, who string, out []byte) latJob {
	t.Helper()
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:] // fio prints its "fio: pid=..." error line first
	}
	var doc struct {
		Jobs []latJob `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
		t.Fatalf("%s JSON: %v (%d jobs): %.300s", who, err, len(doc.Jobs), out)
	}
	return doc.Jobs[0]
}

// runOursJSON runs writepath's fio command and returns its stdout and
// whether it exited non-zero.
func runOursJSON(t *testing.T, args ...string) ([]byte, bool) {
	t.Helper()
	var out, errb bytes.Buffer
	err := RunCommand(context.Background(), append(args, "--output-format=json"), &out, &errb, "test")
	return out.Bytes(), err != nil
}

// TestLatencyTargetMatchesFio runs the same latency_target jobs on fio
// 3.33 and here and compares the JSON's latency fields. The null engine
// meets a 2 s target at every depth however loaded the machine, so the
// search is deterministic: both double to iodepth, run one final window
// at it and stop long before runtime=; with latency_run=1 both run the
// whole runtime.
func TestLatencyTargetMatchesFio(t *testing.T) {
	fio := testenv.Fio(t)
	dir := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		maxRuntime int64 // ms, both
		minRuntime int64
	}{
		{"converges, final window", []string{"--iodepth=5", "--latency_target=2s", "--latency_window=100ms", "--runtime=20", "--time_based"}, 5000, 90},
		{"latency_run", []string{"--iodepth=5", "--latency_target=2s", "--latency_window=100ms", "--latency_run=1", "--runtime=1", "--time_based"}, 1500, 990},
		{"percentile", []string{"--iodepth=3", "--latency_target=2s", "--latency_window=100ms", "--latency_percentile=90", "--runtime=20", "--time_based"}, 5000, 90},
	}
	for _, tt := range tests {
		args := append([]string{"--name=lt", "--ioengine=null", "--size=1g", "--rw=randread", "--directory=" + dir}, tt.args...)
		fout, ferr := exec.Command(fio, append(args, "--output-format=json")...).Output()
		if ferr != nil {
			t.Fatalf("%s: fio: %v", tt.name, ferr)
		}
		theirs := decodeLatJob(t, "fio", fout)
		out, failed := runOursJSON(t, args...)
		if failed {
			t.Fatalf("%s: writepath failed: %s", tt.name, out)
		}
		ours := decodeLatJob(t, "writepath", out)
		t.Logf("%s: fio %+v, writepath %+v", tt.name, theirs, ours)
		a, b := theirs, ours
		a.Runtime, b.Runtime = 0, 0
		if a != b {
			t.Errorf("%s: writepath %+v; fio %+v", tt.name, ours, theirs)
		}
		for _, j := range []latJob{theirs, ours} {
			if j.Runtime > tt.maxRuntime || j.Runtime < tt.minRuntime {
				t.Errorf("%s: job_runtime %d ms (fio %d, writepath %d); want %d..%d", tt.name, j.Runtime, theirs.Runtime, ours.Runtime, tt.minRuntime, tt.maxRuntime)
			}
		}
	}
}

// TestMaxLatencyFailsAsFio: an I/O over max_latency ends the job with
// ETIMEDOUT (fio's error 110) and a non-zero exit, in both.
func TestMaxLatencyFailsAsFio(t *testing.T) {
	fio := testenv.Fio(t)
	dir := diskDir(t)
	args := []string{"--name=ml", "--filename=" + filepath.Join(dir, "ml.dat"), "--size=1m", "--rw=randread", "--direct=1",
		"--max_latency=1us", "--runtime=5", "--time_based"}
	start := time.Now()
	fout, ferr := exec.Command(fio, append(args, "--output-format=json")...).Output()
	theirs := decodeLatJob(t, "fio", fout)
	out, failed := runOursJSON(t, args...)
	ours := decodeLatJob(t, "writepath", out)
	if ferr == nil || theirs.Error != 110 {
		t.Fatalf("fio: %v, error %d; want exit 1 and error 110 (the peer's behaviour changed?)", ferr, theirs.Error)
	}
	if !failed || ours.Error != 110 {
		t.Errorf("writepath: failed %v, error %d; want non-zero exit and error 110, as fio", failed, ours.Error)
	}
	if took := time.Since(start); took > 5*time.Second || ours.Runtime > 1000 {
		t.Errorf("both took %v, writepath's job %d ms; want the first direct read to end the 5 s job", took, ours.Runtime)
	}
	if !strings.Contains(string(out), `"latency_depth"`) {
		t.Errorf("writepath JSON lacks latency_depth")
	}
}
