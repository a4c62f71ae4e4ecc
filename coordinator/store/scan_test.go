package store

import (
	"fmt"
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// intervals collects a run's merged intervals.
func intervals(t testing.TB, s *Store, id string) []*writepathv1.MergedInterval {
	t.Helper()
	var out []*writepathv1.MergedInterval
	if err := s.Intervals(id, func(_ int, mi *writepathv1.MergedInterval) error {
		out = append(out, mi)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshots collects a run's worker snapshots (of phase, or all if < 0).
func snapshots(t testing.TB, s *Store, id string, phase int) []WorkerSnapshot {
	t.Helper()
	var out []WorkerSnapshot
	if err := s.WorkerIntervals(id, phase, func(_ int, sn WorkerSnapshot) error {
		out = append(out, sn)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScanBatchesResumeInOrder: a scan longer than one batch yields every
// value once, in key order, across its read transactions; the caller's
// work runs outside them, so it may even write enough to make bbolt grow
// and remap the file (which waits for every open read transaction, so it
// would hang inside one).
func TestScanBatchesResumeInOrder(t *testing.T) {
	s := openTemp(t)
	const workers, seqs = 7, 3*scanValues/7 + 5
	for seq := range seqs {
		var snaps []WorkerSnapshot
		for w := range workers {
			snaps = append(snaps, WorkerSnapshot{Worker: fmt.Sprintf("w%02d", w), Interval: &writepathv1.Interval{Seq: uint32(seq)}})
		}
		if err := s.PutInterval("r", 1, &writepathv1.MergedInterval{Seq: uint32(seq)}, snaps); err != nil {
			t.Fatal(err)
		}
	}
	n, grown := 0, false
	err := s.WorkerIntervals("r", -1, func(phase int, sn WorkerSnapshot) error {
		if want := fmt.Sprintf("w%02d/%d", n%workers, n/workers); phase != 1 || fmt.Sprintf("%s/%d", sn.Worker, sn.Interval.GetSeq()) != want {
			return fmt.Errorf("snapshot %d = phase %d %s/%d; want phase 1 %s", n, phase, sn.Worker, sn.Interval.GetSeq(), want)
		}
		n++
		if !grown { // 8 MiB: past the file's mmap, which bbolt must then grow
			grown = true
			return s.PutRun(&writepathv1.Run{Id: "big", Reason: string(make([]byte, 8<<20))})
		}
		return nil
	})
	if err != nil || n != workers*seqs {
		t.Fatalf("WorkerIntervals = %d snapshots, %v; want %d", n, err, workers*seqs)
	}
	if got := snapshots(t, s, "r", 1); len(got) != workers*seqs {
		t.Errorf("phase 1: %d snapshots; want %d", len(got), workers*seqs)
	}
	if got := snapshots(t, s, "r", 0); len(got) != 0 {
		t.Errorf("phase 0: %d snapshots; want none", len(got))
	}
	if got := intervals(t, s, "r"); len(got) != seqs {
		t.Errorf("%d merged intervals; want %d", len(got), seqs)
	}
	if got := intervals(t, s, "missing"); len(got) != 0 {
		t.Errorf("missing run: %d intervals", len(got))
	}
}

// TestWorkerTotalsSurvivePruning: totals are read back in phase, worker
// order, and retention, which drops the snapshots, keeps them.
func TestWorkerTotalsSurvivePruning(t *testing.T) {
	s := openTemp(t)
	if err := s.PutRun(&writepathv1.Run{Id: "r", State: writepathv1.RunState_RUN_STATE_FINISHED}); err != nil {
		t.Fatal(err)
	}
	snap := []WorkerSnapshot{{Worker: "a", Interval: &writepathv1.Interval{}}}
	if err := s.PutInterval("r", 0, &writepathv1.MergedInterval{}, snap); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{2, 0} {
		if err := s.PutWorkerTotals("r", p, []*writepathv1.WorkerTotal{{Worker: "b", Intervals: uint32(p)}, {Worker: "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PruneWorkerIntervals(0, time.Unix(1800000000, 0)); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.WorkerTotals("r", func(phase int, tot *writepathv1.WorkerTotal) error {
		got = append(got, fmt.Sprintf("%d/%s/%d", phase, tot.GetWorker(), tot.GetIntervals()))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[0/a/0 0/b/0 2/a/0 2/b/2]" {
		t.Errorf("WorkerTotals = %v; want [0/a/0 0/b/0 2/a/0 2/b/2]", got)
	}
	if n := len(snapshots(t, s, "r", -1)); n != 0 {
		t.Errorf("%d snapshots after pruning; want 0", n)
	}
}
