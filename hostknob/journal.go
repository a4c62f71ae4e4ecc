package hostknob

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// JournalName is the journal's file name inside the directory it is
// opened in (the worker's data directory).
const JournalName = ".writepath-host.journal"

// maxJournal bounds the journal file read at start-up; a few changes per
// phase never come near it.
const maxJournal = 4 << 20

// Change is one host setting changed on purpose: enough to put it back,
// also from the journal in a later process.
type Change struct {
	// Kind names the Restorer that puts it back ("file", "remount").
	Kind string `json:"kind"`
	// Target is what was changed: a sysfs or procfs file, a mount point.
	Target string `json:"target"`
	// Ident, if set, is what Target must still be for a restore to apply
	// (a mount's major:minor).
	Ident string `json:"ident,omitempty"`
	// Before is the value to put back.
	Before string `json:"before"`
}

// Restorer puts one kind of Change back. A journal is input (its
// directory may be writable by jobs), so Restore must refuse a Change it
// could not have made.
type Restorer interface {
	Restore(c Change) error
}

// RestorerFunc adapts a function to Restorer.
type RestorerFunc func(c Change) error

// Restore calls f.
func (f RestorerFunc) Restore(c Change) error { return f(c) }

// record is one line of the journal: a set of changes begun, or ended.
type record struct {
	Begin   uint64   `json:"begin,omitempty"`
	End     uint64   `json:"end,omitempty"`
	Changes []Change `json:"changes,omitempty"`
}

// Journal records host changes before they are made, so that a process
// killed while they are in force has them restored when it starts again.
// A set of changes is begun (appended and fsynced) before the first of
// them is made, and ended once all are restored. Its methods are safe for
// concurrent use; the file is locked against other processes.
type Journal struct {
	path      string
	restorers map[string]Restorer
	mu        struct {
		sync.Mutex
		f    *os.File
		open map[uint64][]Change // begun, not ended
		next uint64
	}
}

// OpenJournal opens (creating) the journal in dir. Sets of changes a dead
// process left open are loaded, not restored: call Recover. restorers
// maps Change.Kind to what puts a change of that kind back.
func OpenJournal(dir string, restorers map[string]Restorer) (*Journal, error) {
	j := &Journal{path: filepath.Join(dir, JournalName), restorers: restorers}
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w %s: in use by another process (one worker per data directory): %w", ErrJournal, j.path, err)
	}
	open, next, err := load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	j.mu.f, j.mu.open, j.mu.next = f, open, next
	return j, nil
}

// load reads every record; a torn last line (a crash mid-append) is
// ignored, anything else unreadable is an error.
func load(f *os.File) (map[uint64][]Change, uint64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if st.Size() > maxJournal {
		return nil, 0, fmt.Errorf("%d bytes, more than the %d a journal can hold", st.Size(), maxJournal)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, 0, err
	}
	open := map[uint64][]Change{}
	var next uint64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxJournal)
	for n := 1; sc.Scan(); n++ {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || (r.Begin == 0) == (r.End == 0) {
			if !sc.Scan() && !bytes.HasSuffix(b, []byte("\n")) {
				break // the torn last line of a crash mid-append: it changed nothing yet
			}
			return nil, 0, fmt.Errorf("line %d is not a journal record", n)
		}
		if r.Begin != 0 {
			open[r.Begin] = r.Changes
		}
		delete(open, r.End)
		next = max(next, r.Begin, r.End)
	}
	return open, next, sc.Err()
}

// Pending returns the sets of changes begun and not ended, oldest first.
func (j *Journal) Pending() [][]Change {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out [][]Change
	for _, id := range slices.Sorted(maps.Keys(j.mu.open)) {
		out = append(out, slices.Clone(j.mu.open[id]))
	}
	return out
}

// Recover restores every set left open, the newest first, and ends each
// set whose changes were all restored. It returns every failure.
func (j *Journal) Recover() error {
	j.mu.Lock()
	ids := slices.Sorted(maps.Keys(j.mu.open))
	j.mu.Unlock()
	var errs []error
	for _, id := range slices.Backward(ids) {
		if err := j.Restore(id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Begin appends a set of changes and fsyncs it; make the changes only
// after it returns. The id ends the set (Restore, End).
func (j *Journal) Begin(changes []Change) (uint64, error) {
	for _, c := range changes {
		if j.restorers[c.Kind] == nil {
			return 0, fmt.Errorf("%w: no restorer for a %q change", ErrJournal, c.Kind)
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.mu.next++
	id := j.mu.next
	if err := j.appendLocked(record{Begin: id, Changes: changes}); err != nil {
		return 0, err
	}
	j.mu.open[id] = slices.Clone(changes)
	return id, nil
}

// Restore puts a set's changes back, in the order they were recorded,
// and ends it if every one was restored. A failed set stays open, so the
// next start-up tries again.
func (j *Journal) Restore(id uint64) error {
	j.mu.Lock()
	changes, ok := j.mu.open[id]
	j.mu.Unlock()
	if !ok {
		return nil
	}
	var errs []error
	for _, c := range changes {
		r := j.restorers[c.Kind]
		if r == nil {
			errs = append(errs, fmt.Errorf("restore %s: no restorer for a %q change", c.Target, c.Kind))
			continue
		}
		if err := r.Restore(c); err != nil {
			errs = append(errs, fmt.Errorf("restore %s to %q: %w", c.Target, c.Before, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return j.End(id)
}

// End records that a set needs no restoring (it was restored, or none of
// it was changed). With no set left open the file is emptied.
func (j *Journal) End(id uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.mu.open[id]; !ok {
		return nil
	}
	delete(j.mu.open, id)
	if len(j.mu.open) == 0 && j.mu.f != nil {
		if err := j.mu.f.Truncate(0); err != nil {
			return fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
		}
		if err := j.mu.f.Sync(); err != nil {
			return fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
		}
		return nil
	}
	return j.appendLocked(record{End: id})
}

func (j *Journal) appendLocked(r record) error {
	if j.mu.f == nil {
		return fmt.Errorf("%w %s: closed", ErrJournal, j.path)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	st, err := j.mu.f.Stat()
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	if _, err := j.mu.f.WriteAt(append(b, '\n'), st.Size()); err != nil {
		return fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	if err := j.mu.f.Sync(); err != nil {
		return fmt.Errorf("%w %s: %w", ErrJournal, j.path, err)
	}
	return nil
}

// Path is the journal file.
func (j *Journal) Path() string { return j.path }

// Close releases the file and its lock; open sets stay in it for the
// next process.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.mu.f == nil {
		return nil
	}
	err := j.mu.f.Close()
	j.mu.f = nil
	return err
}

// syncDir fsyncs a directory, so a new journal file's entry is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
