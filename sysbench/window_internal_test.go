package sysbench

import (
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/workload/oltp"
)

// TestWindowReportsWhatItCannotMerge: an interval whose histogram does
// not decode is an error naming it, not a window silently left empty
// (the summary's percentiles would then be the largest worker's).
func TestWindowReportsWhatItCannotMerge(t *testing.T) {
	at := time.Unix(1000, 0)
	h := hist.New()
	for v := int64(1); v <= 100; v++ {
		h.Record(v * 1000)
	}
	good, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	iv := func(seq uint32, hdr []byte) *writepathv1.MergedInterval {
		return &writepathv1.MergedInterval{Phase: oltp.PhaseRun, Seq: seq,
			Start: timestamppb.New(at.Add(time.Duration(seq) * time.Second)), End: timestamppb.New(at.Add(time.Duration(seq+1) * time.Second)),
			Ops: []*writepathv1.OpHistogram{{Op: "trx", Hdr: hdr}}}
	}
	run := func(ivs ...*writepathv1.MergedInterval) *results.Run {
		return &results.Run{Record: &writepathv1.Run{Phases: []*writepathv1.PhaseRecord{{Name: oltp.PhaseRun, At: timestamppb.New(at)}}},
			Intervals: ivs}
	}
	got, err := window(run(iv(0, good), iv(1, good)), 0, math.Inf(1))
	if err != nil || got.Count() != 200 {
		t.Fatalf("two good intervals: %v, %v; want 200 values", got, err)
	}
	_, err = window(run(iv(0, good), iv(1, []byte("not a histogram"))), 0, math.Inf(1))
	if err == nil || !strings.Contains(err.Error(), "interval 1") {
		t.Errorf("a corrupt interval: err %v; want one naming interval 1", err)
	}
}

// TestLiveLineSaysWhatItCannotRead: an interval line whose histogram does
// not decode still prints (latency 0, as sysbench's format has no other
// way) and a warning beside it says why.
func TestLiveLineSaysWhatItCannotRead(t *testing.T) {
	at := time.Unix(1000, 0)
	var out strings.Builder
	l := &liveLines{text: oltp.NewText(&out, oltp.Output{Verbosity: 3}), pct: 95, interval: time.Second}
	l.event(&writepathv1.WatchRunResponse{Event: &writepathv1.WatchRunResponse_Interval{Interval: &writepathv1.MergedInterval{
		Phase: oltp.PhaseRun, Seq: 3, Seconds: 1, Start: timestamppb.New(at), End: timestamppb.New(at.Add(time.Second)),
		Ops: []*writepathv1.OpHistogram{{Op: "trx", Hdr: []byte("not a histogram")}}}}})
	if got := out.String(); !strings.Contains(got, "interval 3: ") || !strings.Contains(got, "its latency is shown as 0") || !strings.Contains(got, "tps:") {
		t.Errorf("printed %q; want the line and a warning naming interval 3", got)
	}
}
