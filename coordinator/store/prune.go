package store

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// PruneWorkerIntervals is the store's retention: it drops the per-worker
// interval snapshots of every ended run except the keep newest ended ones,
// and stamps each run it pruned (Run.worker_intervals_pruned). Merged
// intervals, totals and the run records stay. Runs in flight are never
// touched. It returns the ids of the runs pruned, oldest first.
//
// Per-worker snapshots are most of a fleet's store (measured at 1,000
// workers: 4.1 MB of file per 1 s interval, a 4 KiB page per snapshot,
// against 45 KB merged; 15-16 MB per worker-hour in all, 0.2 MB once
// pruned); bbolt reuses the pages freed, so the file stops growing, and
// Compact shrinks it.
func (s *Store) PruneWorkerIntervals(keep int, now time.Time) ([]string, error) {
	if keep < 0 {
		return nil, fmt.Errorf("prune: keep %d: want >= 0", keep)
	}
	var pruned []string
	err := s.update(func(tx *bolt.Tx) error {
		runs, intervals := tx.Bucket(bucketRuns), tx.Bucket(bucketIntervals)
		// Choose first, change after: bbolt cursors are not stable across
		// writes to their bucket.
		var victims []*writepathv1.Run
		kept := 0
		c := runs.Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			r := &writepathv1.Run{}
			if err := get(runs, k, r); err != nil {
				return err
			}
			if !runEnded(r.GetState()) {
				continue
			}
			if kept++; kept > keep {
				victims = append(victims, r)
			}
		}
		for i := len(victims) - 1; i >= 0; i-- {
			r := victims[i]
			rb := intervals.Bucket([]byte(r.GetId()))
			if rb == nil || rb.Bucket(bucketRunWorkers) == nil {
				continue // pruned before, or never had any
			}
			if err := rb.DeleteBucket(bucketRunWorkers); err != nil {
				return fmt.Errorf("run %s: %w", r.GetId(), err)
			}
			r.WorkerIntervalsPruned = timestamppb.New(now)
			if err := put(runs, []byte(r.GetId()), r); err != nil {
				return err
			}
			pruned = append(pruned, r.GetId())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prune worker intervals: %w", err)
	}
	return pruned, nil
}

// runEnded reports whether a run in state st can no longer get intervals.
func runEnded(st writepathv1.RunState) bool {
	switch st {
	case writepathv1.RunState_RUN_STATE_UNSPECIFIED, writepathv1.RunState_RUN_STATE_SUBMITTED,
		writepathv1.RunState_RUN_STATE_PLACING, writepathv1.RunState_RUN_STATE_RUNNING:
		return false
	}
	return true
}

// Compact writes a compacted copy of the store file at src to dst (which
// must not exist), leaving src as it is: bbolt never returns freed pages
// to the file system, so pruning alone does not shrink it.
func Compact(dst, src string) error {
	in, err := bolt.Open(src, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("compact: open %s: %w (is a coordinator using it?)", src, err)
	}
	defer in.Close()
	out, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("compact: create %s: %w", dst, err)
	}
	if err := safe(src, func() error { return bolt.Compact(out, in, 64<<20) }); err != nil {
		out.Close()
		return fmt.Errorf("compact %s into %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("compact: close %s: %w", dst, err)
	}
	return nil
}
