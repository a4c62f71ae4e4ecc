package sysbench

import (
	"bytes"
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
func TestFabricQueueFullInSysbenchWords(t *testing.T) {
	o := viaFabric(t, 2, false, "", "oltp_write_only", "--mysql-dry-run", "--time=5", "--rate=2000000000", "run")
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
