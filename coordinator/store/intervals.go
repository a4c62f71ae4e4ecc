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
// Run.phases) together with the worker snapshots it was merged from, in one
// transaction: one commit per interval, whatever the number of workers.
func (s *Store) PutInterval(runID string, phase int, m *writepathv1.MergedInterval, snaps []WorkerSnapshot) error {
	err := s.update(func(tx *bolt.Tx) error {
		rb, wb, err := runIntervalBuckets(tx, runID)
		if err != nil {
			return err
		}
		if m != nil {
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
		return fmt.Errorf("put interval %s/%d/%d: %w", runID, phase, m.GetSeq(), err)
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

// Intervals returns a run's merged intervals in phase, then time, order.
func (s *Store) Intervals(runID string) ([]*writepathv1.MergedInterval, error) {
	var out []*writepathv1.MergedInterval
	err := s.view(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketIntervals).Bucket([]byte(runID))
		if rb == nil {
			return nil
		}
		c := rb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil { // the nested workers bucket
				continue
			}
			m := &writepathv1.MergedInterval{}
			if err := get(rb, k, m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("intervals of %s: %w", echo.Clip(runID), err)
	}
	return out, nil
}

// WorkerIntervals returns every worker snapshot of a run in phase, time,
// then worker order.
func (s *Store) WorkerIntervals(runID string) ([]WorkerSnapshot, error) {
	var out []WorkerSnapshot
	err := s.view(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketIntervals).Bucket([]byte(runID))
		if rb == nil || rb.Bucket(bucketRunWorkers) == nil {
			return nil
		}
		wb := rb.Bucket(bucketRunWorkers)
		return wb.ForEach(func(k, _ []byte) error {
			if _, _, ok := parseIntervalKey(k); !ok {
				return fmt.Errorf("bad worker interval key %x", k)
			}
			iv := &writepathv1.Interval{}
			if err := get(wb, k, iv); err != nil {
				return err
			}
			out = append(out, WorkerSnapshot{Worker: string(k[6:]), Interval: iv})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("worker intervals of %s: %w", echo.Clip(runID), err)
	}
	return out, nil
}
