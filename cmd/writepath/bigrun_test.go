package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/runview"
)

// A run as the coordinator stores it, past the largest message limit of
// any of our gRPC paths (256 MiB, the CLI's): bigWorkers workers, each
// sending per 1 s interval a 5,000-write histogram (~2.3 KB encoded) and
// bigCounters counters with long names (~55 KB; the coordinator accepts up
// to 512 of 128 bytes), for bigIntervals intervals: ~290 MB of snapshots.
// Wide snapshots make the run big in few values, so it is written and read
// in seconds even under -race (1,000 workers' 2.3 KB snapshots as big take
// minutes).
const (
	bigWorkers   = 100
	bigIntervals = 50
	bigCounters  = 500
	bigLimit     = 256 << 20
)

// bigRun writes a run of bigWorkers x bigIntervals into st through the
// store's API, as the coordinator does (merged interval and snapshots per
// commit, per-worker totals at the end), and returns the total of writes
// and the bytes of snapshots stored.
func bigRun(t *testing.T, st *store.Store, id string, at time.Time) (writes int64, stored int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const kinds = 10 // distinct worker histograms
	hs, enc, totalEnc := make([]*hist.Histogram, kinds), make([][]byte, kinds), make([][]byte, kinds)
	for i := range hs {
		hs[i] = hist.New()
		for range 5000 {
			hs[i].Record(int64(200e3 * (0.2 + rng.ExpFloat64()*rng.ExpFloat64())))
		}
		enc[i] = mustEncode(t, hs[i])
		tot := hist.New()
		for range bigIntervals {
			tot.Merge(hs[i])
		}
		totalEnc[i] = mustEncode(t, tot)
	}
	merged := hist.New()
	for w := range bigWorkers {
		merged.Merge(hs[w%kinds])
	}
	mergedHdr := mustEncode(t, merged)
	counters, totalCounters, mergedCounters := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for i := range bigCounters {
		name := fmt.Sprintf("table_%03d_rows_changed_%0100d", i, i)[:100]
		counters[name], totalCounters[name], mergedCounters[name] = int64(i), int64(i)*bigIntervals, int64(i)*bigWorkers
	}
	names := make([]string, bigWorkers)
	pws := make([]*writepathv1.PhaseWorker, bigWorkers)
	for w := range names {
		names[w] = fmt.Sprintf("sim-%04d", w)
		pws[w] = &writepathv1.PhaseWorker{Worker: names[w], ShardIndex: uint32(w), Done: true}
	}
	rec := &writepathv1.Run{Id: id, KindName: "sim", State: writepathv1.RunState_RUN_STATE_FINISHED, Interval: durationpb.New(time.Second),
		Started: timestamppb.New(at), Ended: timestamppb.New(at.Add(bigIntervals * time.Second)),
		Phases: []*writepathv1.PhaseRecord{{Name: "run", Placement: writepathv1.Placement_PLACEMENT_ALL, Measured: true,
			State: writepathv1.PhaseState_PHASE_STATE_DONE, At: timestamppb.New(at), Workers: pws, Intervals: bigIntervals}}}
	if err := st.PutRun(rec); err != nil {
		t.Fatal(err)
	}
	for seq := range bigIntervals {
		start, end := timestamppb.New(at.Add(time.Duration(seq)*time.Second)), timestamppb.New(at.Add(time.Duration(seq+1)*time.Second))
		snaps := make([]store.WorkerSnapshot, bigWorkers)
		for w := range snaps {
			snaps[w] = store.WorkerSnapshot{Worker: names[w], Interval: &writepathv1.Interval{RunId: id, Phase: "run", Seq: uint32(seq),
				Start: start, End: end, Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: enc[w%kinds]}}, Counters: counters}}
		}
		stored += bigWorkers * proto.Size(snaps[0].Interval) // all alike but for the histogram, of one size
		mi := &writepathv1.MergedInterval{RunId: id, Phase: "run", Seq: uint32(seq), Start: start, End: end, Seconds: 1,
			Ops:      []*writepathv1.OpHistogram{{Op: "write", Hdr: mergedHdr}},
			Stats:    []*writepathv1.OpStats{{Op: "write", Count: merged.Count(), P50: merged.Percentile(50), P99: merged.Percentile(99), P999: merged.Percentile(99.9)}},
			Counters: mergedCounters, Reporting: names}
		if err := st.PutInterval(id, 0, mi, snaps); err != nil {
			t.Fatal(err)
		}
		writes += merged.Count()
	}
	totals := make([]*writepathv1.WorkerTotal, bigWorkers)
	for w := range totals {
		totals[w] = &writepathv1.WorkerTotal{Worker: names[w], Phase: "run", Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: totalEnc[w%kinds]}},
			Counters: totalCounters, Seconds: bigIntervals, Intervals: bigIntervals}
	}
	if err := st.PutWorkerTotals(id, 0, totals); err != nil {
		t.Fatal(err)
	}
	return writes, stored
}

// smallRun is a one-worker, one-interval run to compare the big one with.
func smallRun(t *testing.T, st *store.Store, id string, at time.Time) {
	t.Helper()
	h := hist.New()
	h.RecordN(300e3, 1000)
	rec := &writepathv1.Run{Id: id, KindName: "sim", State: writepathv1.RunState_RUN_STATE_FINISHED, Interval: durationpb.New(time.Second),
		Phases: []*writepathv1.PhaseRecord{{Name: "run", Measured: true, State: writepathv1.PhaseState_PHASE_STATE_DONE, At: timestamppb.New(at)}}}
	if err := st.PutRun(rec); err != nil {
		t.Fatal(err)
	}
	mi := &writepathv1.MergedInterval{RunId: id, Phase: "run", Start: timestamppb.New(at), End: timestamppb.New(at.Add(time.Second)), Seconds: 1,
		Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: mustEncode(t, h)}}, Stats: []*writepathv1.OpStats{{Op: "write", Count: 1000}}}
	if err := st.PutInterval(id, 0, mi, nil); err != nil {
		t.Fatal(err)
	}
}

func mustEncode(t *testing.T, h *hist.Histogram) []byte {
	t.Helper()
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunLargerThanAnyMessage: a run whose stored data is larger than any
// message limit of our gRPC paths is shown, reported and compared through
// a real `writepath coordinator` (its own transport) and through the
// embedded fabric (gRPC's default 4 MiB limits), where it is also streamed
// whole. (From the file it reads alike: TestResultsGolden.) It takes ~20 s
// (more under -race): the run must be written, ~290 MB, to prove it.
func TestRunLargerThanAnyMessage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "big.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	start := time.Now()
	writes, stored := bigRun(t, st, "20270115-080000.000", at)
	smallRun(t, st, "20270115-090000.000", at.Add(time.Hour))
	st.Close()
	t.Logf("wrote %d MB of snapshots in %v", stored>>20, time.Since(start).Round(time.Millisecond))
	if stored <= bigLimit {
		t.Fatalf("the run stores %d bytes of snapshots; want more than %d", stored, bigLimit)
	}
	want := regexp.MustCompile(fmt.Sprintf(`merged\s+write\s+%d\s`, writes))

	addr, stop := runCoordinatorCmd(t, db)
	checkBigCLI(t, dir, want, "--coordinator", addr)
	stop()

	f, err := local.Start(local.Config{DBPath: db})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start = time.Now()
	checkBigEmbedded(t, f, writes)
	t.Logf("embedded fabric: %v", time.Since(start).Round(time.Millisecond))
}

// checkBigCLI runs `runs show`, `runs compare` and `report` on the big run.
func checkBigCLI(t *testing.T, dir string, want *regexp.Regexp, source ...string) {
	t.Helper()
	for _, args := range [][]string{
		{"runs", "show", "20270115-080000.000"},
		{"runs", "compare", "20270115-080000.000", "20270115-090000.000"},
		{"report", "20270115-080000.000", "-o", filepath.Join(dir, "big.html")},
	} {
		start := time.Now()
		out, errOut, err := runCLI(t, dir, append(args, source...)...)
		t.Logf("%s %s: %v", strings.Join(args[:2], " "), source[0], time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("writepath %s %s: %v\n%s", strings.Join(args, " "), source[0], err, errOut)
		}
		switch args[1] {
		case "show":
			if !want.MatchString(out) || !strings.Contains(out, fmt.Sprintf("sim-%04d", bigWorkers-1)) {
				t.Errorf("runs show %s: no merged total of every write, or no last worker:\n%.2000s", source[0], out)
			}
		case "compare":
			if !regexp.MustCompile(`write\s+ops/s\s+\d+\s+\d+\s+-`).MatchString(out) {
				t.Errorf("runs compare %s: no write rate of both runs, B's lower:\n%s", source[0], out)
			}
		}
	}
}

// checkBigEmbedded reads the big run through the embedded fabric's own
// connection: reduced as summary, report and comparison, and streamed
// whole with every snapshot.
func checkBigEmbedded(t *testing.T, f *local.Fabric, writes int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := client.New(f.Control())
	r, err := results.Read(ctx, c, "20270115-080000.000", results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	s, err := client.Summarize(r, kindOf(r.Record.GetKindName()))
	if err != nil {
		t.Fatal(err)
	}
	ph := s.Phases[0]
	var perWorker int64
	for _, w := range ph.Workers {
		perWorker += w.Ops[0].Count
	}
	if ph.Merged.Ops[0].Count != writes || len(ph.Workers) != bigWorkers || perWorker != writes {
		t.Errorf("summary: merged %d writes, %d workers summing to %d; want %d over %d", ph.Merged.Ops[0].Count, len(ph.Workers), perWorker, writes, bigWorkers)
	}
	rep, err := runview.Run(r)
	if err != nil || len(rep.Workers) != bigWorkers || rep.Ops[0].Total.Count() != writes {
		t.Errorf("report: %v, %d worker rows", err, len(rep.Workers))
	}
	small, err := results.Read(ctx, c, "20270115-090000.000", results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := client.Summarize(small, kindOf(small.Record.GetKindName()))
	if err != nil {
		t.Fatal(err)
	}
	if rows := client.Compare(s, ss); len(rows) == 0 || rows[0].A != ph.Merged.Ops[0].OpsPerSec || rows[0].B != 1000 {
		t.Errorf("compare = %+v", rows)
	}
	stream, err := f.Control().ReadRun(ctx, &writepathv1.ReadRunRequest{RunId: "20270115-080000.000", Intervals: true,
		Workers: writepathv1.WorkerDetail_WORKER_DETAIL_INTERVALS})
	if err != nil {
		t.Fatal(err)
	}
	// Every message got through the 4 MiB limit; sizes are sampled.
	var items, largest, snaps int
	for {
		item, err := stream.Recv()
		if err != nil {
			if !strings.Contains(err.Error(), "EOF") {
				t.Fatal(err)
			}
			break
		}
		if items++; items%97 == 1 {
			largest = max(largest, proto.Size(item))
		}
		if item.GetWorkerInterval() != nil {
			snaps++
		}
	}
	if snaps != bigWorkers*bigIntervals || largest > 1<<20 {
		t.Errorf("streamed %d snapshots, largest message sampled %d bytes; want %d, each < 1 MiB", snaps, largest, bigWorkers*bigIntervals)
	}
}

// runCoordinatorCmd runs `writepath coordinator` on db in this process, with
// its own transport settings, until stop (also called when the test ends).
func runCoordinatorCmd(t *testing.T, db string) (addr string, stop func()) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = lis.Addr().String()
	lis.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"coordinator", "--listen", addr, "--db", db})
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		done <- cmd.ExecuteContext(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("coordinator: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := client.Dial(addr); err == nil {
			_, err = c.ListRuns(ctx, 1)
			c.Close()
			if err == nil {
				return addr, stop
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("coordinator on %s did not answer", addr)
	return "", nil
}
