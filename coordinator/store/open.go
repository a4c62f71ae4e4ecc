package store

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Open opens (creating if needed) the store at path and checks it: every
// page reachable is checked from the file's bytes (checkPages) and then
// bbolt's consistency check runs, so a truncated or damaged file fails here, in one line naming it
// (a CorruptError), instead of panicking later in a reader. It waits at
// most one second for the file lock, so a second coordinator on the same
// file fails with a clear error instead of hanging. A file left by a
// killed coordinator opens normally: bbolt's meta pages make every
// committed transaction durable and every uncommitted one invisible.
func Open(path string) (*Store, error) {
	if err := checkExisting(path); err != nil {
		return nil, err
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path}
	if err := s.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.checkReleasing(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// checkExisting runs checkPages over a file that holds something (an
// absent or empty file is a new store).
func checkExisting(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return nil
	}
	if err := checkPages(path); err != nil {
		return &CorruptError{Path: path, What: firstLine(err.Error())}
	}
	return nil
}

// openBolt is bolt.Open with bbolt's panics on a damaged file (its meta
// and freelist assertions, faults in the mapping) turned into errors.
func openBolt(path string) (db *bolt.DB, err error) {
	err = safe(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		return err
	})
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		return nil, err
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
		return nil, &CorruptError{Path: path, What: err.Error()}
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return db, nil
}

// checkOnOpen runs bbolt's consistency check (free pages, reachable
// pages, key order) over pages checkPages has shown to be sound.
func (s *Store) checkOnOpen() error {
	err := s.Check()
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) {
		err = &CorruptError{Path: s.path, What: firstLine(err.Error())}
	}
	return err
}

// ErrCorrupt is what every CorruptError is (errors.Is).
var ErrCorrupt = errors.New("store file is corrupt")

// CorruptError reports damage found in a store file: a bbolt assertion, a
// fault in its mapping, a failed consistency check, a record that does
// not decode.
type CorruptError struct {
	Path string // the file (filled in by the Store when empty)
	What string // what was found, one line
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("store %s is damaged: %s (restore it from a backup, or move it aside to start an empty one)", e.Path, e.What)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// safe runs op on this goroutine with faults turned into panics, and any
// panic into a CorruptError: bbolt panics (and may fault reading its
// mapping) on a damaged file rather than return an error.
func safe(path string, op func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &CorruptError{Path: path, What: firstLine(fmt.Sprint(r))}
		}
	}()
	err = op()
	var ce *CorruptError
	if errors.As(err, &ce) && ce.Path == "" {
		ce.Path = path
	}
	return err
}

// firstLine is the first line of a message of bbolt's, at most 200 bytes
// (a damaged page can put anything in it).
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}
