package fio

import (
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
)

func TestProgressLine(t *testing.T) {
	h := hist.New()
	for i := 0; i < 36_800; i++ {
		h.Record(2_000_000)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := workload.Snapshot{Start: start, End: start.Add(time.Second), Ops: map[string]*hist.Histogram{"write": h, "sync": hist.New()}}
	got := ProgressLine(s)
	for _, want := range []string{"[03:04:06]", "write: 36.8k IOPS p99=2.00ms", "sync: 0 IOPS p99=0ns"} {
		if !strings.Contains(got, want) {
			t.Errorf("ProgressLine = %q; want it to contain %q", got, want)
		}
	}
}
