package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/internal/echo"
)

// Store is the coordinator's bbolt file. It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	path string

	closeOnce sync.Once
	closeErr  error
}

func (s *Store) init() error {
	return s.update(func(tx *bolt.Tx) error {
		for _, name := range topBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		v := meta.Get(keySchema)
		if v == nil {
			return meta.Put(keySchema, binary.BigEndian.AppendUint32(nil, schemaVersion))
		}
		if len(v) != 4 || binary.BigEndian.Uint32(v) != schemaVersion {
			return fmt.Errorf("%w: file has %x, want %d", ErrSchema, v, schemaVersion)
		}
		return nil
	})
}

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close closes the file. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.db.Close() })
	return s.closeErr
}

// Check runs bbolt's consistency check over the whole file. Run it when
// nothing writes: bbolt compares the pages reachable in this read
// transaction against the live freelist, so a concurrent commit shows as
// "reachable freed" pages that are not a fault.
func (s *Store) Check() error {
	return s.view(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

// update and view run every transaction of the store: a panic or fault
// in bbolt (a damaged file) comes back as a CorruptError naming the file.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	err := safe(s.path, func() error { return s.db.Update(fn) })
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

func (s *Store) view(fn func(*bolt.Tx) error) error {
	err := safe(s.path, func() error { return s.db.View(fn) })
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// put marshals m under key in b.
func put(b *bolt.Bucket, key []byte, m proto.Message) error {
	v, err := proto.Marshal(m)
	if err != nil {
		return fmt.Errorf("marshal %T: %w", m, err)
	}
	return b.Put(key, v)
}

// get unmarshals the value under key into m; proto.Unmarshal copies, so
// nothing of the transaction's memory escapes.
func get(b *bolt.Bucket, key []byte, m proto.Message) error {
	v := b.Get(key)
	if v == nil {
		return ErrNotFound
	}
	if err := proto.Unmarshal(v, m); err != nil {
		return &CorruptError{What: fmt.Sprintf("%T %s does not decode: %v", m, echo.Quote(string(key)), err)}
	}
	return nil
}
