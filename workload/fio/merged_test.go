package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// nullJob is a job both fio and writepath run in a few milliseconds.
var nullJob = []string{"--name=x", "--ioengine=null", "--size=4m", "--bs=4k", "--rw=randwrite", "--numjobs=2",
	"--group_reporting"}

// runWorker runs spec as worker index of count would and returns its
// workload and summary.
func runWorker(t *testing.T, spec *fiov1.Spec, index, count int) (*Workload, []byte) {
	t.Helper()
	w, err := NewFromSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	env := workload.Env{DataDir: t.TempDir(), Start: time.Now(), Shard: workload.Shard{Index: index, Count: count}}
	if err := w.Run(context.Background(), PhaseRun, env, nil); err != nil {
		t.Fatal(err)
	}
	sum, err := w.Summary(PhaseRun)
	if err != nil {
		t.Fatal(err)
	}
	return w, sum
}

func specOf(t *testing.T, args ...string) *fiov1.Spec {
	t.Helper()
	spec, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestMergedOneWorkerPrintsLocalOutput: a run on one worker prints,
// byte for byte, what the same run prints locally, in every format, so
// the summary loses nothing.
func TestMergedOneWorkerPrintsLocalOutput(t *testing.T) {
	for _, format := range []string{"normal", "json", "json+", "terse", "json,normal"} {
		for _, extra := range [][]string{nil, {"--rw=randrw", "--clat_percentiles=1", "--lat_percentiles=1", "--fsync=3"}} {
			args := append(append([]string{"--output-format=" + format}, nullJob...), extra...)
			if extra != nil {
				args = append(args[:len(args)-len(extra)-1], extra...) // no group_reporting: one row per clone
			}
			spec := specOf(t, args...)
			w, sum := runWorker(t, spec, 0, 1)
			var local, merged bytes.Buffer
			if err := w.Report(&local); err != nil {
				t.Fatal(err)
			}
			if err := WriteMerged(&merged, spec, []workload.Part{{Worker: "w1", Summary: sum}}); err != nil {
				t.Fatalf("WriteMerged(%q) = %v", args, err)
			}
			if local.String() != merged.String() {
				t.Errorf("%q: one worker's merged output differs from the local report\nlocal:\n%s\nmerged:\n%s", args, &local, &merged)
			}
		}
	}
}

// clientStats is the part of fio's client/server JSON the tests read.
type clientStats struct {
	ClientStats []struct {
		Jobname  string `json:"jobname"`
		Hostname string `json:"hostname"`
		Write    struct {
			TotalIOs int64 `json:"total_ios"`
			IOBytes  int64 `json:"io_bytes"`
			Clat     struct {
				N          int64            `json:"N"`
				Min        int64            `json:"min"`
				Max        int64            `json:"max"`
				Percentile map[string]int64 `json:"percentile"`
				Bins       map[string]int64 `json:"bins"`
			} `json:"clat_ns"`
		} `json:"write"`
	} `json:"client_stats"`
}

// TestMergedAllClientsIsExactMerge: two workers' summaries print as fio's
// client/server JSON, and the "All clients" row's percentiles and bins
// are those of every clone's histogram merged, as if recorded by one.
func TestMergedAllClientsIsExactMerge(t *testing.T) {
	spec := specOf(t, append([]string{"--output-format=json+"}, nullJob...)...)
	w1, s1 := runWorker(t, spec, 0, 2)
	w2, s2 := runWorker(t, spec, 1, 2)
	var out bytes.Buffer
	if err := WriteMerged(&out, spec, []workload.Part{{Worker: "w1", Summary: s1}, {Worker: "w2", Summary: s2}}); err != nil {
		t.Fatal(err)
	}
	var doc clientStats
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, &out)
	}
	rows := doc.ClientStats
	if len(rows) != 3 || rows[0].Hostname != "w1" || rows[1].Hostname != "w2" || rows[2].Jobname != allClients || rows[2].Hostname != "w2" {
		t.Fatalf("client_stats rows = %+v; want w1's, w2's, then All clients (w2)", rows)
	}
	want := hist.New()
	for _, w := range []*Workload{w1, w2} {
		if err := want.Merge(totals(t, w).dir[dirWrite].clat); err != nil {
			t.Fatal(err)
		}
	}
	all := rows[2].Write
	if all.TotalIOs != rows[0].Write.TotalIOs+rows[1].Write.TotalIOs || all.TotalIOs != 2*2*1024 || all.IOBytes != all.TotalIOs*4096 {
		t.Errorf("All clients total_ios=%d io_bytes=%d; want %d+%d = 4096 of 4 KiB", all.TotalIOs, all.IOBytes,
			rows[0].Write.TotalIOs, rows[1].Write.TotalIOs)
	}
	if all.Clat.N != want.Count() || all.Clat.Min != want.Min() || all.Clat.Max != want.Max() {
		t.Errorf("All clients clat N/min/max = %d/%d/%d; merged clones %d/%d/%d", all.Clat.N, all.Clat.Min, all.Clat.Max,
			want.Count(), want.Min(), want.Max())
	}
	for i, v := range fioPercentiles(want, percentiles) {
		if k := fmt.Sprintf("%f", percentiles[i]); all.Clat.Percentile[k] != v {
			t.Errorf("All clients clat p%s = %d; merged clones %d", k, all.Clat.Percentile[k], v)
		}
	}
	bins := map[string]int64{}
	for _, b := range want.Buckets() {
		bins[fmt.Sprint(b.To)] = b.Count
	}
	if !reflect.DeepEqual(all.Clat.Bins, bins) {
		t.Errorf("All clients clat bins differ from the merged clones' buckets:\n%v\n%v", all.Clat.Bins, bins)
	}
}

// TestMergedShapeMatchesFioClientServer runs the same job with the real
// fio 3.33 in client/server mode (two servers on loopback, one client)
// and compares the shape of every output format with writepath's merge
// of two workers: JSON key paths, rows and hosts; normal output's
// per-host prefix and "All clients" block; terse lines and names.
func TestMergedShapeMatchesFioClientServer(t *testing.T) {
	fio := fioPath(t)
	dir := t.TempDir()
	job := filepath.Join(dir, "j.fio")
	if err := os.WriteFile(job, []byte("[x]\nioengine=null\nsize=4m\nbs=4k\nrw=randwrite\nnumjobs=2\ngroup_reporting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := []string{fioServer(t, fio, dir), fioServer(t, fio, dir)}
	for _, format := range []string{"json", "json+", "normal", "terse"} {
		// After the clients: before them, fio's servers also print
		// their job headers as text into the client's JSON.
		var args []string
		for _, h := range hosts {
			args = append(args, "--client="+h, job)
		}
		args = append(args, "--output-format="+format)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		want, err := exec.CommandContext(ctx, fio, args...).Output()
		cancel()
		if err != nil {
			t.Fatalf("fio %q: %v\n%s", args, err, want)
		}
		spec := specOf(t, append([]string{"--output-format=" + format}, nullJob...)...)
		_, s1 := runWorker(t, spec, 0, 2)
		_, s2 := runWorker(t, spec, 1, 2)
		var got bytes.Buffer
		if err := WriteMerged(&got, spec, []workload.Part{{Worker: "w1", Summary: s1}, {Worker: "w2", Summary: s2}}); err != nil {
			t.Fatal(err)
		}
		compareClientShape(t, format, want, got.Bytes())
	}
}

func compareClientShape(t *testing.T, format string, fio, ours []byte) {
	t.Helper()
	switch format {
	case "json", "json+":
		if !bytes.HasPrefix(ours, []byte("\n{")) || !bytes.HasPrefix(fio, []byte("\n{")) {
			t.Errorf("%s: fio's client JSON starts with an empty line; ours starts %q", format, ours[:min(len(ours), 8)])
		}
		// Ours adds percentiles (and bins) to the merged row, which fio's
		// leaves out; every key fio prints must be there.
		if missing := diff(withoutBins(keySet(t, fio)), keySet(t, ours)); len(missing) > 0 {
			t.Errorf("%s: client JSON lacks fio's keys %v", format, missing)
		}
		var a, b clientStats
		_ = json.Unmarshal(fio, &a)
		_ = json.Unmarshal(ours, &b)
		if len(a.ClientStats) != len(b.ClientStats) || b.ClientStats[2].Jobname != a.ClientStats[2].Jobname {
			t.Errorf("%s: %d rows, fio %d", format, len(b.ClientStats), len(a.ClientStats))
		}
	case "normal":
		for _, want := range []string{"<w1> x: (g=0): rw=randwrite", "<w2> Starting 2 processes", "\nAll clients: (groupid=0, jobs=4): err= 0: pid=0: ",
			"     issued rwts: total=0,4096,0,0 short=0,0,0,0 dropped=0,0,0,0\n"} {
			if !strings.Contains(string(ours), want) {
				t.Errorf("normal: no %q in ours:\n%s", want, ours)
			}
		}
		if !strings.Contains(string(fio), "\nAll clients: (groupid=0, jobs=") {
			t.Errorf("fio's client output has no All clients block:\n%s", fio)
		}
	case "terse":
		a, b := terseLines(fio), terseLines(ours)
		if len(a) != 3 || len(b) != 3 {
			t.Fatalf("terse: %d lines, fio %d:\n%s\n%s", len(b), len(a), ours, fio)
		}
		for i := range a {
			fa, fb := strings.Split(a[i], ";"), strings.Split(b[i], ";")
			if len(fa) != len(fb) || fa[2] != fb[2] {
				t.Errorf("terse line %d: %d fields named %q; fio %d named %q", i, len(fb), fb[2], len(fa), fa[2])
			}
		}
	}
}

// withoutBins drops the keys of json+ bins, which are latencies.
func withoutBins(keys map[string]bool) map[string]bool {
	for k := range keys {
		if strings.Contains(k, ".bins.") {
			delete(keys, k)
		}
	}
	return keys
}

// terseLines are the lines that start with a terse version.
func terseLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "3;fio-3.33"); i >= 0 {
			out = append(out, l[i:]) // fio's client may print an ETA before it
		}
	}
	return out
}

// fioServer starts `fio --server` on a free loopback port and returns
// the client address; it is killed when the test ends.
func fioServer(t *testing.T, fio, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(fio, fmt.Sprintf("--server=ip:127.0.0.1,%d", port))
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return fmt.Sprintf("ip:127.0.0.1,%d", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("fio --server on %s did not listen", addr)
	return ""
}

func TestOutputOnlyWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--output-format=normal"}, true}, {[]string{"--minimal"}, true}, {[]string{"--output=f"}, true}} {
		spec := specOf(t, append(tt.args, nullJob...)...)
		b, err := proto.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := outputFor(b) != nil; got != tt.want {
			t.Errorf("outputFor(%q) != nil is %v; want %v", tt.args, got, tt.want)
		}
	}
}

// TestDecodeSummaryRefusesBadInput: a summary is a worker's word; what
// does not fit the spec is refused with a reason, never trusted.
func TestDecodeSummaryRefusesBadInput(t *testing.T) {
	spec := specOf(t, nullJob...)
	_, good := runWorker(t, spec, 0, 1)
	for _, tt := range []struct {
		name, old, new, want string
	}{
		{"job index", `"job" : 0`, `"job" : 7`, "outside the spec's 1 jobs"},
		{"negative index", `"job" : 0`, `"job" : -1`, "outside"},
		{"depth buckets", `"level" : [`, `"level" : [1, `, "7 depth buckets"},
		{"histogram", `"sync" : "`, `"sync" : "AAAA`, "sync"},
		{"not JSON", `{`, `[`, "fio summary of w"},
	} {
		bad := strings.Replace(string(good), tt.old, tt.new, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q not in the summary", tt.name, tt.old)
		}
		_, err := decodeSummary([]byte(bad), spec, "w")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: decodeSummary = %v; want an error with %q", tt.name, err, tt.want)
		}
	}
}
