package store

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// PutWorkerTotals writes the whole-phase totals of phase number phase, one
// per worker, in one transaction. Retention never drops them.
func (s *Store) PutWorkerTotals(runID string, phase int, totals []*writepathv1.WorkerTotal) error {
	err := s.update(func(tx *bolt.Tx) error {
		rb, err := tx.Bucket(bucketIntervals).CreateBucketIfNotExists([]byte(runID))
		if err != nil {
			return err
		}
		tb, err := rb.CreateBucketIfNotExists(bucketRunTotals)
		if err != nil {
			return err
		}
		for _, t := range totals {
			if err := put(tb, totalKey(phase, t.GetWorker()), t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put worker totals %s/%d: %w", echo.Clip(runID), phase, err)
	}
	return nil
}

// WorkerTotals calls fn with each stored worker total of a run and its
// phase index, in phase, then worker, order.
func (s *Store) WorkerTotals(runID string, fn func(phase int, t *writepathv1.WorkerTotal) error) error {
	err := s.scan(append(runPath(runID), bucketRunTotals), nil, func(k, v []byte) (func() error, error) {
		if len(k) < 2 || v == nil {
			return nil, fmt.Errorf("bad worker total key %x", k)
		}
		t := &writepathv1.WorkerTotal{}
		if err := unmarshal(k, v, t); err != nil {
			return nil, err
		}
		phase := int(binary.BigEndian.Uint16(k))
		return func() error { return fn(phase, t) }, nil
	})
	if err != nil {
		return fmt.Errorf("worker totals of %s: %w", echo.Clip(runID), err)
	}
	return nil
}

// totalKey is phase index (big-endian u16) then the worker name.
func totalKey(phase int, worker string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(phase)), worker...)
}
