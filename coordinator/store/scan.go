package store

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/internal/echo"
)

// A scan's read transaction holds at most scanValues values or scanBytes of
// them.
const (
	scanValues = 256
	scanBytes  = 4 << 20
)

// errStop ends a scan early without an error.
var errStop = errors.New("stop scan")

// visitFunc looks at one key and value inside a read transaction. It must
// copy what it keeps (nothing of k or v outlives the transaction) and
// returns what to do with it once the transaction has closed (nil: nothing),
// or errStop to end the scan there.
type visitFunc func(k, v []byte) (func() error, error)

// scan walks the bucket at path in key order from key from (nil: the first)
// and runs what visit returns, in order. It reads in batches, each in its
// own read transaction that is closed before the batch's calls run: a long
// read (a fleet's run streamed to a slow client) never holds a transaction
// open, which would keep bbolt from growing its mmap and so stall every
// commit of the coordinator, and the caller's work never runs inside one.
// A missing bucket is empty. Each batch drops the file pages it read from
// the process's resident set before its transaction closes (releaseRead),
// so a reader of a store of any size holds about one batch of them.
func (s *Store) scan(path [][]byte, from []byte, visit visitFunc) error {
	next, skip := from, false
	for {
		var calls []func() error
		var last []byte
		stopped := false
		err := s.view(func(tx *bolt.Tx) error {
			b := bucketAt(tx, path)
			if b == nil {
				stopped = true
				return nil
			}
			c := b.Cursor()
			k, v := c.First()
			if next != nil {
				k, v = c.Seek(next)
			}
			if skip && k != nil && bytes.Equal(k, next) {
				k, v = c.Next()
			}
			size := 0
			for ; k != nil && len(calls) < scanValues && size < scanBytes; k, v = c.Next() {
				call, err := visit(k, v)
				if errors.Is(err, errStop) {
					stopped = true
					return nil
				}
				if err != nil {
					return err
				}
				last = k
				if call != nil {
					calls = append(calls, call)
					size += len(v)
				}
			}
			if k == nil {
				stopped = true
			}
			last = bytes.Clone(last)
			releaseRead(tx)
			return nil
		})
		if err != nil {
			return err
		}
		for _, call := range calls {
			if err := call(); err != nil {
				return err
			}
		}
		if stopped || last == nil {
			return nil
		}
		next, skip = last, true
	}
}

// bucketAt follows path from the top-level bucket; nil if any is missing.
func bucketAt(tx *bolt.Tx, path [][]byte) *bolt.Bucket {
	b := tx.Bucket(path[0])
	for _, name := range path[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket(name)
	}
	return b
}

// unmarshal decodes a value read at key k; proto.Unmarshal copies, so
// nothing of the transaction's memory escapes.
func unmarshal(k, v []byte, m proto.Message) error {
	if err := proto.Unmarshal(v, m); err != nil {
		// Damage, as get reports it: the read's Store names the file.
		return &CorruptError{What: fmt.Sprintf("%T %s does not decode: %v", m, echo.Quote(string(k)), err)}
	}
	return nil
}
