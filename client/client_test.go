package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
)

func encoded(t *testing.T, vals ...int64) []byte {
	t.Helper()
	h := hist.New()
	for _, v := range vals {
		h.Record(v)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reduced reduces a run given as its record, merged intervals and worker
// snapshots.
func reduced(t *testing.T, rec *writepathv1.Run, ivs []*writepathv1.MergedInterval, snaps []*writepathv1.WorkerInterval) *results.Run {
	t.Helper()
	r, err := results.Read(context.Background(), results.NewItems(rec, ivs, snaps), rec.GetId(), results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLinerIOColumns: a fio run's lines show every op with its own
// MB/s, keep an op's column when an interval lacks it, and label the last,
// partial interval with its real span and the rate over that span.
func TestLinerIOColumns(t *testing.T) {
	at := time.Unix(1000, 0)
	iv := func(seq uint32, secs float64, stats []*writepathv1.OpStats, counters map[string]int64) *writepathv1.MergedInterval {
		start := at.Add(time.Duration(seq) * time.Second)
		return &writepathv1.MergedInterval{Phase: "run", Seq: seq, Seconds: secs, Start: timestamppb.New(start),
			End: timestamppb.New(start.Add(time.Duration(secs * float64(time.Second)))), Stats: stats, Counters: counters,
			Reporting: []string{"a", "b"}, Missing: []string{"c"}}
	}
	l := &Liner{D: time.Second}
	first := l.Line(iv(2, 1, []*writepathv1.OpStats{{Op: "read", Count: 1000, P50: 50e3, P99: 1e6},
		{Op: "write", Count: 2000, P50: 100e3, P99: 2e6, P999: 5e6}, {Op: "sync", Count: 500, P50: 1e6, P99: 3e6},
		{Op: "block.vda.write.d2c", Count: 9}},
		map[string]int64{"write_bytes": 8_192_000, "read_bytes": 4_096_000}), 3)
	for _, want := range []string{"run", "2.0-3.0s", "write    2000 ops/s    8.19 MB/s p50  0.100 p99  2.000 p99.9  5.000 ms",
		"| read    1000 ops/s    4.10 MB/s p50  0.050 p99  1.000 ms", "| sync     500 ops/s p50  1.000 p99  3.000 ms",
		"workers 2/3", "missing c"} {
		if !strings.Contains(first, want) {
			t.Errorf("line = %q; lacks %q", first, want)
		}
	}
	if strings.Contains(first, "block.") || strings.Contains(first, "3500") {
		t.Errorf("line = %q: a kernel series or a total over every op", first)
	}
	last := l.Line(iv(3, 0.004, []*writepathv1.OpStats{{Op: "write", Count: 4, P50: 100e3, P99: 2e6, P999: 2e6}},
		map[string]int64{"write_bytes": 16384}), 3)
	for _, want := range []string{"3.0-3.004s", "write    1000 ops/s    4.10 MB/s", "read       0 ops/s    0.00 MB/s p50      - p99      - ms",
		"sync       0 ops/s p50      - p99      - ms"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line = %q; lacks %q", last, want)
		}
	}
	if i, j := strings.Index(first, "| read"), strings.Index(last, "| read"); i != j {
		t.Errorf("the read column moved from %d to %d:\n%s\n%s", i, j, first, last)
	}
}

// TestLinerTxnColumns: oltp lines count transactions (no MB/s), with
// sysbench's qps split, p95 from the interval's histogram beside p99, and
// errors and reconnects per second; late ones only in an open loop.
func TestLinerTxnColumns(t *testing.T) {
	at := time.Unix(1000, 0)
	vals := make([]int64, 0, 100)
	for i := int64(1); i <= 100; i++ {
		vals = append(vals, i*1e5) // 0.1 .. 10 ms
	}
	mi := &writepathv1.MergedInterval{Phase: "run", Seq: 0, Seconds: 1, Start: timestamppb.New(at), End: timestamppb.New(at.Add(time.Second)),
		Stats:    []*writepathv1.OpStats{{Op: "trx", Count: 100, P50: 5e6, P99: 9.9e6}},
		Ops:      []*writepathv1.OpHistogram{{Op: "trx", Hdr: encoded(t, vals...)}},
		Counters: map[string]int64{"transactions": 100, "writes": 400, "other": 200, "errors": 2, "reconnects": 0, "late": 0},
		Gauges:   map[string]int64{"threads": 8}, Reporting: []string{"a"}}
	l := &Liner{Txn: true, D: time.Second}
	got := l.Line(mi, 1)
	for _, want := range []string{"0.0-1.0s", "thds 8", "tps    100.0", "qps    600.0 (w/o 400.0/200.0)",
		"lat p50  5.000 p95  9.503 p99  9.900 ms", "err/s 2.0", "reconn/s 0.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("line = %q; lacks %q", got, want)
		}
	}
	if strings.Contains(got, "MB/s") || strings.Contains(got, "late/s") || strings.Contains(got, "ops/s") {
		t.Errorf("line = %q: MB/s, ops/s or late/s on a closed-loop transaction line", got)
	}
	// A histogram that does not decode gives no p95 rather than 0.
	good := mi.Ops[0].Hdr
	mi.Ops[0].Hdr = []byte("not a histogram")
	if got := l.Line(mi, 1); !strings.Contains(got, "p95      ? p99") {
		t.Errorf("line with a broken histogram = %q; want p95 ?", got)
	}
	mi.Ops[0].Hdr = good
	mi.Stats = append(mi.Stats, &writepathv1.OpStats{Op: "trx_uncorrected", Count: 100})
	if got := l.Line(mi, 1); !strings.Contains(got, "late/s 0.0") || strings.Contains(got, "trx_uncorrected") {
		t.Errorf("open-loop line = %q; want late/s, not the uncorrected op", got)
	}
}

func TestSummarizeMergesHistogramsNotPercentiles(t *testing.T) {
	// Worker a is fast, b slow: the merged p50 must be the union's, which
	// no average of the two workers' p50s gives.
	at := time.Unix(1000, 0)
	iv := func(w string, vals ...int64) *writepathv1.WorkerInterval {
		return &writepathv1.WorkerInterval{Worker: w, Interval: &writepathv1.Interval{Phase: "run",
			Start: timestamppb.New(at), End: timestamppb.New(at.Add(time.Second)),
			Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: encoded(t, vals...)}}, Counters: map[string]int64{"write_bytes": 4096}}}
	}
	resp := reduced(t, &writepathv1.Run{Id: "r", KindName: "fio", State: writepathv1.RunState_RUN_STATE_PARTIAL, Lost: []string{"b"},
		Interval: durationpb.New(time.Second),
		Phases:   []*writepathv1.PhaseRecord{{Name: "run", Workers: []*writepathv1.PhaseWorker{{Worker: "a"}, {Worker: "b", Lost: true}}}}},
		[]*writepathv1.MergedInterval{{Phase: "run", Seconds: 1,
			Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: encoded(t, 1e3, 1e3, 1e3, 9e6)}}, Counters: map[string]int64{"write_bytes": 8192}}},
		[]*writepathv1.WorkerInterval{iv("a", 1e3, 1e3, 1e3), iv("b", 9e6)})
	s, err := Summarize(resp, Kind{})
	if err != nil {
		t.Fatal(err)
	}
	ph := s.Phases[0]
	if ph.Merged.Ops[0].Count != 4 || ph.Merged.Ops[0].P50Ms != 0.001 || ph.Merged.MBPerSec != 0.008192 {
		t.Errorf("merged = %+v; want 4 ops, p50 1 µs, 0.008192 MB/s", ph.Merged)
	}
	if len(ph.Workers) != 2 || ph.Workers[1].Ops[0].Count != 1 || !ph.Workers[1].Lost {
		t.Errorf("workers = %+v", ph.Workers)
	}
	if s.State != "partial" || s.Lost[0] != "b" {
		t.Errorf("summary state %q lost %v", s.State, s.Lost)
	}
	h, err := Cumulative(resp, "", "b", "write")
	if err != nil || h.Count() != 1 {
		t.Errorf("Cumulative(b) = %v, %v", h, err)
	}
	if _, err := Cumulative(resp, "", "", "read"); err == nil || !strings.Contains(err.Error(), `no operation "read"`) {
		t.Errorf("Cumulative(read) error = %v", err)
	}
}
