package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestPruneWorkerIntervals keeps the per-worker snapshots of the newest
// ended runs only, never touches a run in flight, keeps every merged
// interval, stamps what it pruned, and is idempotent.
func TestPruneWorkerIntervals(t *testing.T) {
	s := openTemp(t)
	states := []writepathv1.RunState{ // oldest first
		writepathv1.RunState_RUN_STATE_FINISHED, writepathv1.RunState_RUN_STATE_FAILED,
		writepathv1.RunState_RUN_STATE_RUNNING, writepathv1.RunState_RUN_STATE_PARTIAL,
		writepathv1.RunState_RUN_STATE_FINISHED,
	}
	var ids []string
	for i, st := range states {
		id := fmt.Sprintf("20261130-12000%d.000000", i)
		ids = append(ids, id)
		if err := s.PutRun(&writepathv1.Run{Id: id, State: st}); err != nil {
			t.Fatal(err)
		}
		for seq := range uint32(3) {
			snaps := []WorkerSnapshot{{"w1", &writepathv1.Interval{Seq: seq}}, {"w2", &writepathv1.Interval{Seq: seq}}}
			if err := s.PutInterval(id, 0, &writepathv1.MergedInterval{Seq: seq}, snaps); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Unix(1800000000, 0)
	pruned, err := s.PruneWorkerIntervals(2, now)
	if err != nil {
		t.Fatal(err)
	}
	// Ended, newest first: 4, 3, 1, 0 (2 is running). Keep 4 and 3.
	if want := []string{ids[0], ids[1]}; !slices.Equal(pruned, want) {
		t.Fatalf("pruned %v; want %v", pruned, want)
	}
	for i, id := range ids {
		w := snapshots(t, s, id, -1)
		if m := intervals(t, s, id); len(m) != 3 {
			t.Errorf("run %d: %d merged intervals; want all 3 kept", i, len(m))
		}
		r, err := s.GetRun(id)
		if err != nil {
			t.Fatal(err)
		}
		wasPruned := i <= 1
		if wasPruned != (len(w) == 0) || wasPruned != (r.GetWorkerIntervalsPruned() != nil) {
			t.Errorf("run %d (%s): %d worker snapshots, pruned stamp %v; want pruned %v", i, r.GetState(), len(w), r.GetWorkerIntervalsPruned(), wasPruned)
		}
		if wasPruned && !r.GetWorkerIntervalsPruned().AsTime().Equal(now) {
			t.Errorf("run %d: pruned at %v; want %v", i, r.GetWorkerIntervalsPruned().AsTime(), now)
		}
	}
	if again, err := s.PruneWorkerIntervals(2, now.Add(time.Hour)); err != nil || len(again) != 0 {
		t.Errorf("second prune = %v, %v; want nothing left to prune", again, err)
	}
	if _, err := s.PruneWorkerIntervals(-1, now); err == nil {
		t.Error("keep -1 accepted")
	}
}

// TestCompactShrinksAPrunedStore: pruning frees pages inside the file;
// Compact writes a smaller copy that holds the same runs.
func TestCompactShrinksAPrunedStore(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "wp.db")
	s, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	big := &writepathv1.Interval{Seq: 0, Counters: map[string]int64{}}
	for i := range 200 {
		big.Counters[fmt.Sprintf("counter-%03d", i)] = int64(i)
	}
	for i := range 5 {
		id := fmt.Sprintf("20261130-13000%d.000000", i)
		if err := s.PutRun(&writepathv1.Run{Id: id, State: writepathv1.RunState_RUN_STATE_FINISHED}); err != nil {
			t.Fatal(err)
		}
		var snaps []WorkerSnapshot
		for w := range 200 {
			snaps = append(snaps, WorkerSnapshot{fmt.Sprintf("w%03d", w), big})
		}
		if err := s.PutInterval(id, 0, &writepathv1.MergedInterval{Seq: 0}, snaps); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PruneWorkerIntervals(1, time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dst := filepath.Join(dir, "wp.compact.db")
	if err := Compact(dst, src); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(src)
	after, _ := os.Stat(dst)
	t.Logf("store %d bytes, compacted %d", before.Size(), after.Size())
	if after.Size() >= before.Size()/2 {
		t.Errorf("compacted %d bytes from %d; want well under half after pruning 4 of 5 runs", after.Size(), before.Size())
	}
	c, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if runs, err := c.ListRuns(0); err != nil || len(runs) != 5 {
		t.Errorf("compacted store has %d runs, %v; want 5", len(runs), err)
	}
}
