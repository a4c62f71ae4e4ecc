package client

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
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

func TestIntervalLine(t *testing.T) {
	at := time.Unix(1000, 0)
	mi := &writepathv1.MergedInterval{Phase: "run", Seq: 2, Seconds: 1,
		Start: timestamppb.New(at.Add(2 * time.Second)), End: timestamppb.New(at.Add(3 * time.Second)),
		Stats: []*writepathv1.OpStats{{Op: "write", Count: 2000, P50: 100e3, P99: 2e6, P999: 5e6},
			{Op: "sync", Count: 500}},
		Counters: map[string]int64{"write_bytes": 8_192_000}, Reporting: []string{"a", "b"}, Missing: []string{"c"}}
	got := IntervalLine(mi, time.Second, 3)
	for _, want := range []string{"run", "3.0s", "2500 ops/s", "8.19 MB/s", "write p50 0.100 p99 2.000 p99.9 5.000 ms", "workers 2/3", "missing c"} {
		if !strings.Contains(got, want) {
			t.Errorf("IntervalLine = %q; lacks %q", got, want)
		}
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
	resp := &writepathv1.GetRunResponse{
		Run: &writepathv1.Run{Id: "r", KindName: "fio", State: writepathv1.RunState_RUN_STATE_PARTIAL, Lost: []string{"b"},
			Interval: durationpb.New(time.Second),
			Phases:   []*writepathv1.PhaseRecord{{Name: "run", Workers: []*writepathv1.PhaseWorker{{Worker: "a"}, {Worker: "b", Lost: true}}}}},
		Intervals: []*writepathv1.MergedInterval{{Phase: "run", Seconds: 1,
			Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: encoded(t, 1e3, 1e3, 1e3, 9e6)}}, Counters: map[string]int64{"write_bytes": 8192}}},
		WorkerIntervals: []*writepathv1.WorkerInterval{iv("a", 1e3, 1e3, 1e3), iv("b", 9e6)},
	}
	s, err := Summarize(resp)
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
