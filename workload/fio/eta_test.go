package fio

import (
	"regexp"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// TestEtaLine: the ETA line is fio 3.33's (eta.c): jobs and files, the
// condensed run string, the percentage, rates and IOPS of the directions
// that moved, and the eta.
func TestEtaLine(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ten := int64(10 * time.Second)
	e := &etaState{start: t0, jobs: []*fiov1.Job{
		{Rw: fiov1.ReadWrite_READ_WRITE_WRITE, TimeBased: true, RuntimeNs: ten, Numjobs: 2},
		{Rw: fiov1.ReadWrite_READ_WRITE_RANDRW, Rwmixread: 50, TimeBased: true, RuntimeNs: ten, Nrfiles: 3},
	}}
	w := hist.New()
	for range 36_800 {
		w.Record(2_000_000)
	}
	s := workload.Snapshot{Start: t0.Add(4 * time.Second), End: t0.Add(5 * time.Second),
		Ops: map[string]*hist.Histogram{"write": w}, Counters: map[string]int64{"write_bytes": 36_800 * 4096}}
	got := e.line(s)
	if want := regexp.MustCompile(`^Jobs: 3 \(f=5\): \[W\(2\),m\(1\)\]\[50\.0%\]\[w=\d+(\.\d+)?MiB/s\]\[w=36\.8k IOPS\]\[eta 00m:05s\]$`); !want.MatchString(got) {
		t.Errorf("line = %q; want fio's shape %v", got, want)
	}
	// A shorter line next blanks what the longer one left.
	s.Ops, s.Counters = nil, nil
	if next := e.line(s); len(next) != len(got) {
		t.Errorf("next line %q is %d long; want %d (padded)", next, len(next), len(got))
	}
}

func TestEtaText(t *testing.T) {
	for secs, want := range map[uint64]string{0: "00m:00s", 65: "01m:05s", 3605: "01h:00m:05s", 90061: "01d:01h:01m:01s"} {
		if got := etaText(secs); got != want {
			t.Errorf("etaText(%d) = %q; want %q", secs, got, want)
		}
	}
}

// TestEtaRemainingBySize: a job bound by its size is done when its bytes
// are, at the rate so far.
func TestEtaRemainingBySize(t *testing.T) {
	e := &etaState{jobs: []*fiov1.Job{{Rw: fiov1.ReadWrite_READ_WRITE_WRITE, Size: 100 << 20}}, done: 25 << 20}
	if got := e.remaining(2); got != 6 {
		t.Errorf("remaining after 2 s at a quarter done = %v; want 6", got)
	}
}
