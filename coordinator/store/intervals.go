package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// WorkerSnapshot is one worker's own interval, stored beside the merge.
type WorkerSnapshot struct {
	Worker   string
	Interval *writepathv1.Interval
}

// PutInterval writes a merged interval of phase number phase (its index in
// Run.phases) and/or worker snapshots (m nil: snapshots only), in one
// transaction, whatever the number of workers.
func (s *Store) PutInterval(runID string, phase int, m *writepathv1.MergedInterval, snaps []WorkerSnapshot) error {
	var ms []*writepathv1.MergedInterval
	if m != nil {
		ms = []*writepathv1.MergedInterval{m}
	}
	return s.PutIntervals(runID, phase, ms, snaps)
}

// PutIntervals is PutInterval for several merged intervals and their
// snapshots, in one transaction (one fsync): a writer that fell behind
// catches up with it.
func (s *Store) PutIntervals(runID string, phase int, ms []*writepathv1.MergedInterval, snaps []WorkerSnapshot) error {
	err := s.update(func(tx *bolt.Tx) error {
		rb, wb, err := runIntervalBuckets(tx, runID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if err := put(rb, intervalKey(phase, m.GetSeq()), m); err != nil {
				return err
			}
		}
		for _, sn := range snaps {
			k := workerIntervalKey(phase, sn.Interval.GetSeq(), sn.Worker)
			if err := put(wb, k, sn.Interval); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put %d intervals %s/%d (%d snapshots): %w", len(ms), echo.Clip(runID), phase, len(snaps), err)
	}
	return nil
}

func runIntervalBuckets(tx *bolt.Tx, runID string) (run, workers *bolt.Bucket, err error) {
	run, err = tx.Bucket(bucketIntervals).CreateBucketIfNotExists([]byte(runID))
	if err != nil {
		return nil, nil, err
	}
	workers, err = run.CreateBucketIfNotExists(bucketRunWorkers)
	return run, workers, err
}

// GetInterval reads one merged interval.
func (s *Store) GetInterval(runID string, phase int, seq uint32) (*writepathv1.MergedInterval, error) {
	m := &writepathv1.MergedInterval{}
	err := s.view(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketIntervals).Bucket([]byte(runID))
		if rb == nil {
			return ErrNotFound
		}
		return get(rb, intervalKey(phase, seq), m)
	})
	if err != nil {
		return nil, fmt.Errorf("interval %s/%d/%d: %w", echo.Clip(runID), phase, seq, err)
	}
	return m, nil
}

// Intervals calls fn with each merged interval of a run and its phase
// index, in phase, then time, order. It reads in batches (see scan), so
// fn may take its time.
func (s *Store) Intervals(runID string, fn func(phase int, mi *writepathv1.MergedInterval) error) error {
	err := s.scan(runPath(runID), nil, func(k, v []byte) (func() error, error) {
		if v == nil { // a nested bucket (workers, totals)
			return nil, nil
		}
		phase, _, ok := parseIntervalKey(k)
		if !ok || len(k) != 6 {
			return nil, fmt.Errorf("bad interval key %x", k)
		}
		m := &writepathv1.MergedInterval{}
		if err := unmarshal(k, v, m); err != nil {
			return nil, err
		}
		return func() error { return fn(phase, m) }, nil
	})
	if err != nil {
		return fmt.Errorf("intervals of %s: %w", echo.Clip(runID), err)
	}
	return nil
}

// WorkerIntervals calls fn with each worker snapshot of a run and its phase
// index, in phase, time, then worker order; with phase >= 0, only that
// phase's. It reads in batches (see scan).
func (s *Store) WorkerIntervals(runID string, phase int, fn func(phase int, sn WorkerSnapshot) error) error {
	var from []byte
	if phase >= 0 {
		from = intervalKey(phase, 0)
	}
	err := s.scan(append(runPath(runID), bucketRunWorkers), from, func(k, v []byte) (func() error, error) {
		p, _, ok := parseIntervalKey(k)
		if !ok || v == nil {
			return nil, fmt.Errorf("bad worker interval key %x", k)
		}
		if phase >= 0 && p != phase {
			return nil, errStop
		}
		iv := &writepathv1.Interval{}
		if err := unmarshal(k, v, iv); err != nil {
			return nil, err
		}
		sn := WorkerSnapshot{Worker: string(k[6:]), Interval: iv}
		return func() error { return fn(p, sn) }, nil
	})
	if err != nil {
		return fmt.Errorf("worker intervals of %s: %w", echo.Clip(runID), err)
	}
	return nil
}

func runPath(runID string) [][]byte { return [][]byte{bucketIntervals, []byte(runID)} }
