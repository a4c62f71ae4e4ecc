package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// sampleJSON is a real fio 3.33 (Debian) run of the job, shortened:
//
//	fio --name=mysql_sim --ioengine=libaio --iodepth=32 --rw=randwrite --bs=4k
//	    --size=16M --numjobs=2 --runtime=2 --time_based --group_reporting
//	    --direct=1 --fsync=4 --output-format=json --directory=/var/tmp/fiosample
const sampleJSON = "testdata/fio-3.33-randwrite-libaio.json"

// keyPaths flattens a decoded JSON document into its key paths; array
// elements share the path "name[]" so that the key set is independent of
// how many jobs or disks there are.
func keyPaths(prefix string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := prefix + "." + k
			out[p] = true
			keyPaths(p, c, out)
		}
	case []any:
		for _, c := range x {
			keyPaths(prefix+"[]", c, out)
		}
	}
}

func keySet(t *testing.T, data []byte) map[string]bool {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, data)
	}
	keys := map[string]bool{}
	keyPaths("", doc, keys)
	return keys
}

func diff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestJSONKeySetMatchesFio runs the sample's job (smaller) and compares
// every key path of our JSON with the real fio 3.33 sample's.
func TestJSONKeySetMatchesFio(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=mysql_sim", "--ioengine=libaio", "--iodepth=32", "--rw=randwrite",
		"--bs=4k", "--size=1M", "--numjobs=2", "--runtime=300ms", "--time_based", "--group_reporting",
		"--direct=1", "--fsync=4", "--output-format=json", "--directory="+dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := w.Report(&buf); err != nil {
		t.Fatal(err)
	}
	ours := buf.Bytes()
	sample, err := os.ReadFile(sampleJSON)
	if err != nil {
		t.Fatal(err)
	}
	got, want := keySet(t, ours), keySet(t, sample)
	if missing, extra := diff(want, got), diff(got, want); len(missing)+len(extra) > 0 {
		t.Errorf("JSON keys differ from fio 3.33's:\nmissing %v\nextra %v", missing, extra)
	}
	var doc struct {
		Jobs []struct {
			Write struct {
				TotalIOs int64 `json:"total_ios"`
				IOBytes  int64 `json:"io_bytes"`
			} `json:"write"`
			Sync struct {
				TotalIOs int64 `json:"total_ios"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(ours, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Jobs) != 1 || doc.Jobs[0].Write.TotalIOs == 0 || doc.Jobs[0].Write.IOBytes != doc.Jobs[0].Write.TotalIOs*4096 ||
		doc.Jobs[0].Sync.TotalIOs == 0 {
		t.Errorf("group_reporting JSON jobs = %+v; want one job with writes and syncs", doc.Jobs)
	}
}

func TestJSONPlusHasBins(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=p", "--rw=randwrite", "--size=256k", "--direct=1", "--output-format=json+")
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.Summary(PhaseRun)
	if err != nil {
		t.Fatal(err)
	}
	if keys := keySet(t, out); !keys[".jobs[].write.clat_ns.bins"] {
		t.Errorf("json+ output has no clat_ns.bins")
	}
}

// TestNormalOutputLooksLikeFio checks that every line kind of fio's normal
// output (from the real sample) appears in ours.
func TestNormalOutputLooksLikeFio(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=mysql_sim", "--ioengine=libaio", "--iodepth=8", "--rw=randwrite",
		"--size=1M", "--numjobs=2", "--runtime=700ms", "--time_based", "--group_reporting", "--direct=1", "--fsync=4")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder // 700 ms: one bandwidth sample (fio prints no bw line without one)
	if err := w.Report(&b); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"mysql_sim: (g=0): rw=randwrite, bs=(R) 4096B-4096B", "Starting 2 processes",
		"mysql_sim: Laying out IO file (1 file / 1MiB)", "mysql_sim: (groupid=0, jobs=2): err= 0: pid=",
		"  write: IOPS=", "    slat (", "    clat (", "     lat (", "    clat percentiles (", "     |  1.00th=[",
		"   bw (  KiB/s): min=", "   iops        : min=", "  fsync/fdatasync/sync_file_range:", "    sync (",
		"    sync percentiles (", "  cpu          : usr=", "  IO depths    : 1=", "     submit    : 0=",
		"     complete  : 0=", "     issued rwts: total=0,", "     latency   : target=0, window=0, percentile=100.00%, depth=8",
		"Run status group 0 (all jobs):", "  WRITE: bw=", "Disk stats (read/write):"} {
		if !strings.Contains(b.String(), "\n"+prefix) && !strings.HasPrefix(b.String(), prefix) {
			t.Errorf("normal output lacks a line starting %q:\n%s", prefix, b.String())
		}
	}
}

// TestGroupReportingMergeIsExact: merging clones' histograms gives exactly
// the percentiles of one histogram holding every value; nothing averages.
func TestGroupReportingMergeIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	all := hist.New()
	var clones []*clone
	job := &fiov1.Job{Name: "g", GroupReporting: true, Iodepth: 1}
	for i := 0; i < 4; i++ {
		st := newJobStats()
		st.wall, st.runtime = time.Second, time.Second
		scale := float64(int64(10_000) << (2 * i)) // very different distributions per clone
		for n := 0; n < 5000+i*3000; n++ {
			v := int64(r.ExpFloat64() * scale)
			st.dir[dirWrite].clat.Record(v)
			st.dir[dirWrite].ios++
			all.Record(v)
		}
		clones = append(clones, &clone{job: job, st: st})
	}
	es, err := entries(&result{clones: clones})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].st.jobs != 4 || es[0].st.dir[dirWrite].ios != all.Count() {
		t.Fatalf("entries(group_reporting) = %d entries, %d jobs; want 1 entry of 4 jobs", len(es), es[0].st.jobs)
	}
	got := es[0].st.dir[dirWrite].clat
	for _, p := range percentiles {
		if g, w := got.Percentile(p), all.Percentile(p); g != w {
			t.Errorf("merged p%v = %d; want %d (one histogram of all values)", p, g, w)
		}
	}
	if got.Min() != all.Min() || got.Max() != all.Max() || got.Mean() != all.Mean() {
		t.Errorf("merged min/max/mean %d/%d/%f; want %d/%d/%f", got.Min(), got.Max(), got.Mean(), all.Min(), all.Max(), all.Mean())
	}
	job.GroupReporting = false
	if es, _ := entries(&result{clones: clones}); len(es) != 4 {
		t.Errorf("entries(no group_reporting) = %d entries; want 4", len(es))
	}
}

// TestNum2Str checks fio's number rendering against strings from the real
// fio sample output (testdata/fio-3.33-randwrite-libaio.txt).
func TestNum2Str(t *testing.T) {
	tests := []struct {
		n    uint64
		pow2 bool
		unit string
		want string
	}{
		{36770, false, "", "36.8k"},
		{13653, false, "", "13.7k"},
		{8389, false, "", "8389"},
		{150994944, true, "B", "144MiB"},
		{150994944, false, "B", "151MB"},
		{8388608, true, "B", "8192KiB"},
		{8388608, false, "B", "8389kB"},
		{300941312, true, "B", "287MiB"},
	}
	for _, tt := range tests {
		if got := num2str(tt.n, 4, tt.pow2, tt.unit); got != tt.want {
			t.Errorf("num2str(%d, 4, %v, %q) = %q; want %q", tt.n, tt.pow2, tt.unit, got, tt.want)
		}
	}
}

func TestRandMapCoversEveryBlockOnce(t *testing.T) {
	for _, n := range []uint64{1, 63, 64, 65, 4096, 100_003} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := newRandMap(n)
			r := rand.New(rand.NewPCG(n, 7))
			seen := make([]bool, n)
			for i := uint64(0); i < n; i++ {
				b, ok := m.take(r.Uint64N(n))
				if !ok || b >= n || seen[b] {
					t.Fatalf("take #%d = %d, %v; want a fresh block < %d", i, b, ok, n)
				}
				seen[b] = true
			}
			if _, ok := m.take(0); ok {
				t.Error("take on a full map succeeded")
			}
			m.reset()
			if b, ok := m.take(n - 1); !ok || b != n-1 {
				t.Errorf("after reset take(%d) = %d, %v", n-1, b, ok)
			}
		})
	}
}

func TestSamplesMergeAndSum(t *testing.T) {
	var a, b, all samples
	for i, v := range []float64{10, 20, 30, 40, 55, 61, 70} {
		all.add(v)
		if i < 3 {
			a.add(v)
		} else {
			b.add(v)
		}
	}
	pooled := a
	pooled.merge(b)
	if pooled.n != all.n || pooled.min != all.min || pooled.max != all.max ||
		math.Abs(pooled.mean-all.mean) > 1e-9 || math.Abs(pooled.stddev()-all.stddev()) > 1e-9 {
		t.Errorf("merge = %+v; want %+v", pooled, all)
	}
	summed := a
	summed.sum(b)
	if summed.min != a.min+b.min || summed.max != a.max+b.max || math.Abs(summed.mean-(a.mean+b.mean)) > 1e-9 {
		t.Errorf("sum = %+v; want min, max and mean of a and b added", summed)
	}
}

// TestGtodReduceMatchesFio: gtod_reduce=1 reports the I/O and no
// latencies or bandwidth samples, in JSON and in the normal output's
// job block (nothing between the IOPS line and cpu), as fio 3.33.
func TestGtodReduceMatchesFio(t *testing.T) {
	fio := fioPath(t)
	args := []string{"--name=g", "--ioengine=null", "--size=16m", "--gtod_reduce=1"}
	for _, format := range []string{"json", "normal"} {
		cmd := exec.Command(fio, append(args, "--output-format="+format)...)
		cmd.Dir = t.TempDir()
		theirs, err := cmd.Output()
		if err != nil {
			t.Fatalf("fio: %v", err)
		}
		var ours, errOut bytes.Buffer
		if err := RunCommand(context.Background(), append(args, "--output-format="+format), &ours, &errOut, "t"); err != nil {
			t.Fatal(err)
		}
		if format == "normal" {
			block := func(b []byte) string {
				s := string(b)
				i, k := strings.Index(s, "  read:"), strings.Index(s, "  cpu")
				if i < 0 || k < i {
					t.Fatalf("no job block in\n%s", s)
				}
				return fmt.Sprint(strings.Count(s[i:k], "\n")) // lines, not numbers
			}
			if a, b := block(ours.Bytes()), block(theirs); a != b {
				t.Errorf("job block has %s lines; fio's %s", a, b)
			}
			continue
		}
		for who, b := range map[string][]byte{"fio": theirs, "writepath": ours.Bytes()} {
			var doc struct {
				Jobs []struct {
					Read struct {
						IOs  int64 `json:"total_ios"`
						Clat struct {
							N int64 `json:"N"`
						} `json:"clat_ns"`
						Lat struct {
							N int64 `json:"N"`
						} `json:"lat_ns"`
						BWSamples int64   `json:"bw_samples"`
						BWAgg     float64 `json:"bw_agg"`
					} `json:"read"`
				} `json:"jobs"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %v", who, err)
			}
			r := doc.Jobs[0].Read
			if r.IOs != 4096 || r.Clat.N != 0 || r.Lat.N != 0 || r.BWSamples != 0 || r.BWAgg != 0 {
				t.Errorf("%s: %+v; want 4096 I/Os and no latency or bandwidth samples", who, r)
			}
		}
	}
}
