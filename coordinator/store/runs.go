package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// PutRun writes (creates or replaces) a run record.
func (s *Store) PutRun(r *writepathv1.Run) error {
	if r.GetId() == "" {
		return fmt.Errorf("put run: empty id")
	}
	err := s.update(func(tx *bolt.Tx) error {
		return put(tx.Bucket(bucketRuns), []byte(r.GetId()), r)
	})
	if err != nil {
		return fmt.Errorf("put run %s: %w", r.GetId(), err)
	}
	return nil
}

// GetRun reads a run record.
func (s *Store) GetRun(id string) (*writepathv1.Run, error) {
	r := &writepathv1.Run{}
	err := s.view(func(tx *bolt.Tx) error {
		return get(tx.Bucket(bucketRuns), []byte(id), r)
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", echo.Clip(id), err)
	}
	return r, nil
}

// ListRuns returns runs newest first; limit <= 0 returns all.
func (s *Store) ListRuns(limit int) ([]*writepathv1.Run, error) {
	var out []*writepathv1.Run
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRuns).Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			if limit > 0 && len(out) >= limit {
				break
			}
			r := &writepathv1.Run{}
			if err := get(tx.Bucket(bucketRuns), k, r); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// PutWorker records the last known state of a worker.
func (s *Store) PutWorker(w *writepathv1.WorkerInfo) error {
	err := s.update(func(tx *bolt.Tx) error {
		return put(tx.Bucket(bucketWorkers), []byte(w.GetName()), w)
	})
	if err != nil {
		return fmt.Errorf("put worker %s: %w", w.GetName(), err)
	}
	return nil
}

// Workers returns every worker ever seen, by name.
func (s *Store) Workers() ([]*writepathv1.WorkerInfo, error) {
	var out []*writepathv1.WorkerInfo
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketWorkers)
		return b.ForEach(func(k, _ []byte) error {
			w := &writepathv1.WorkerInfo{}
			if err := get(b, k, w); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	return out, nil
}
