package sysbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload/oltp" // the kind the workers run
)

// viaFabric runs a command on an embedded fabric of n workers (real gRPC
// over loopback), as `writepath sysbench --local-workers n` does.
func viaFabric(t *testing.T, n int, perWorker bool, db string, args ...string) result {
	t.Helper()
	return viaFabricThen(t, n, perWorker, db, nil, args...)
}

// viaFabricThen is viaFabric, then calls then (if not nil) with a client
// of the fabric, before it closes.
func viaFabricThen(t *testing.T, n int, perWorker bool, db string, then func(*client.Client), args ...string) result {
	t.Helper()
	f, err := local.Start(local.Config{Workers: n, DBPath: filepath.Join(t.TempDir(), "wp.db"),
		Worker: worker.Config{DataDir: t.TempDir(), Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.WaitWorkers(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cfg := Config{Version: "test", Stdout: &out, Stderr: &errb, Fabric: func(*writepathv1.RunSpec) (*Fabric, func(), error) {
		return &Fabric{Client: client.New(f.Control()), PerWorker: perWorker}, func() {}, nil
	}}
	code := Main(t.Context(), append(args, conn(t, db)...), cfg)
	if then != nil {
		then(client.New(f.Control()))
	}
	return result{code, out.String(), errb.String()}
}

// TestFabricPrintsMergedAsSysbench: through a fabric of two workers the
// commands print what sysbench prints for one run (the same line shapes),
// with the two workers' threads merged: their transactions add up, the
// fairness is over all four threads; --per-worker adds each worker's.
func TestFabricPrintsMergedAsSysbench(t *testing.T) {
	needPeer(t)
	admin(t, "DROP DATABASE IF EXISTS sb_peer", "DROP DATABASE IF EXISTS sb_wp", "CREATE DATABASE sb_peer", "CREATE DATABASE sb_wp")
	base := []string{"oltp_write_only", "--tables=2", "--table-size=1000", "--threads=2"}
	cmd := func(args ...string) []string { return append(append([]string(nil), base...), args...) }
	for _, c := range [][]string{
		cmd("prepare"),
		cmd("--time=3", "--report-interval=1", "--histogram", "run"),
		cmd("--events=300", "--time=0", "--report-checkpoints=1", "run"),
		cmd("prewarm"),
		cmd("cleanup"),
	} {
		p, o := peer(t, "sb_peer", c...), viaFabric(t, 2, false, "sb_wp", c...)
		if p.code != o.code {
			t.Errorf("%q through the fabric: exit %d; sysbench %d\n%v\n%v", c, o.code, p.code, o, p)
		}
		if c[len(c)-1] == "run" {
			sameShape(t, fmt.Sprintf("%q through the fabric", c), p.stdout, o.stdout)
		} else {
			sameSortedShape(t, fmt.Sprintf("%q through the fabric", c), p.stdout, o.stdout)
		}
	}
	sameSorted(t, cmd("prepare")...) // two threads: sysbench prints its tables in any order
	o := viaFabric(t, 2, true, "sb_wp", cmd("--events=400", "--time=0", "run")...)
	if o.code != 0 || !strings.Contains(o.stdout, "total number of events:              800\n") ||
		!strings.Contains(o.stdout, "Worker worker-1:") || !strings.Contains(o.stdout, "Worker worker-2:") {
		t.Errorf("--per-worker through two workers (400 events each):\n%v", o)
	}
	if i := strings.Index(o.stdout, "Threads fairness:\n    events (avg/stddev):           200.0000/"); i < 0 {
		t.Errorf("merged fairness is not over the four threads (200 events each on average):\n%s", o.stdout)
	}
	if !strings.Contains(o.stdout, "\nNumber of threads: 4\n") {
		t.Errorf("the header does not count the two workers' four threads:\n%s", o.stdout)
	}
	// --rate: each worker keeps the rate, the header says the merged one,
	// and every interval has sysbench's queue line, the workers' together.
	rate := cmd("--time=2", "--rate=40", "--report-interval=1", "run")
	p, o := peer(t, "sb_peer", rate...), viaFabric(t, 2, false, "sb_wp", rate...)
	if p.code != 0 || o.code != 0 {
		t.Errorf("%q: exit %d, sysbench %d\n%v\n%v", rate, o.code, p.code, o, p)
	}
	sameShape(t, fmt.Sprintf("%q through the fabric", rate), p.stdout, o.stdout)
	if !strings.Contains(o.stdout, "\nTarget transaction rate: 80/sec\n") || !strings.Contains(o.stdout, "\n[ 1s ] queue length: ") {
		t.Errorf("%q through two workers: no merged rate or no queue line:\n%s", rate, o.stdout)
	}
	sameSorted(t, cmd("cleanup")...)
}

// TestFabricQueueFullInSysbenchWords: a --rate no worker keeps up with
// ends the merged run as sysbench ends one: exit 1 and sysbench's line,
// not a worker's name before it (nor another worker's cancellation).
// Neither worker is cancelled: each ends the phase itself or is stopped
// in order, and its summary is in the record.
func TestFabricQueueFullInSysbenchWords(t *testing.T) {
	var workers []*writepathv1.PhaseWorker
	o := viaFabricThen(t, 2, false, "", func(c *client.Client) {
		runs, err := c.ListRuns(t.Context(), 1)
		if err != nil || len(runs) != 1 {
			t.Fatalf("list runs: %d, %v", len(runs), err)
		}
		workers = runs[0].GetPhases()[0].GetWorkers()
	}, "oltp_write_only", "--mysql-dry-run", "--time=5", "--rate=2000000000", "run")
	for _, pw := range workers {
		var rep oltp.PhaseReport
		if err := json.Unmarshal(pw.GetSummary(), &rep); err != nil || rep.Run == nil || strings.HasPrefix(pw.GetError(), "cancelled") {
			t.Errorf("worker %s: error %q, summary %s (%v); want its summary, not cancelled", pw.GetWorker(), pw.GetError(), pw.GetSummary(), err)
		}
	}
	if len(workers) != 2 {
		t.Errorf("%d workers in the run phase; want 2", len(workers))
	}
	const full = "\nFATAL: The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate\n"
	if o.code != 1 || !strings.Contains(o.stdout, full) || strings.Contains(o.stdout, "worker-") {
		t.Errorf("exit %d; want 1 and sysbench's line alone\n%v", o.code, o)
	}
}

func TestSysbenchEnd(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want error
	}{
		{"cancelled: another worker failed: worker-2: " + oltp.ErrQueueFull.Error(), oltp.ErrQueueFull},
		{oltp.ErrForcedShutdown.Error(), oltp.ErrForcedShutdown},
		{"connect: refused", nil},
	} {
		if got := sysbenchEnd(tt.in); got != tt.want {
			t.Errorf("sysbenchEnd(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

// TestFabricForcedShutdownReportsEveryWorker: a forced shutdown through
// two workers (two threads each, every write blocked by a table lock)
// prints the whole run's report, as sysbench's over four threads: the
// four transactions cut off, exit 2. The worker that ends the phase first
// gets the other stopped in order, not cancelled, so its totals count.
func TestFabricForcedShutdownReportsEveryWorker(t *testing.T) {
	needPeer(t)
	admin(t, "DROP DATABASE IF EXISTS sb_peer", "DROP DATABASE IF EXISTS sb_wp", "CREATE DATABASE sb_peer", "CREATE DATABASE sb_wp")
	base := []string{"oltp_write_only", "--tables=1", "--table-size=1000"}
	same(t, append(base, "prepare")...)
	run := append(base, "--time=1", "--forced-shutdown=1", "run")
	unlock := lockFor(t, "sb_peer")
	p := peer(t, "sb_peer", append(run, "--threads=4")...)
	unlock()
	unlock = lockFor(t, "sb_wp")
	var workers []*writepathv1.PhaseWorker
	o := viaFabricThen(t, 2, false, "sb_wp", func(c *client.Client) {
		runs, err := c.ListRuns(t.Context(), 1)
		if err != nil || len(runs) != 1 {
			t.Fatalf("list runs: %d, %v", len(runs), err)
		}
		workers = runs[0].GetPhases()[0].GetWorkers()
	}, append(run, "--threads=2")...)
	unlock()
	// Each worker's own report is in the record: its two transactions
	// cut off, done in order (its own forced shutdown or stopped), none
	// cancelled.
	for _, pw := range workers {
		var rep oltp.PhaseReport
		if err := json.Unmarshal(pw.GetSummary(), &rep); err != nil || rep.Run == nil ||
			!rep.Run.ForcedShutdown || rep.Run.Unfinished != 2 || strings.HasPrefix(pw.GetError(), "cancelled") {
			t.Errorf("worker %s: error %q, summary %s (%v); want its 2 unfinished, not cancelled", pw.GetWorker(), pw.GetError(), pw.GetSummary(), err)
		}
	}
	if len(workers) != 2 {
		t.Errorf("%d workers in the run phase; want 2", len(workers))
	}
	if p.code != 2 || o.code != 2 {
		t.Errorf("forced shutdown: exit %d, sysbench %d; want 2\n%v\n%v", o.code, p.code, o, p)
	}
	sameShape(t, "forced shutdown through two workers", p.stdout, o.stdout)
	const cut = "Number of unfinished transactions on forced shutdown: 4\n"
	if !strings.Contains(p.stdout, cut) || !strings.Contains(o.stdout, cut) {
		t.Errorf("want %q from both (four threads, each in a blocked transaction)\n%v\n%v", cut, o, p)
	}
	sameCutFigures(t, "forced shutdown through two workers", p.stdout, o.stdout)
	same(t, append(base, "cleanup")...)
}
