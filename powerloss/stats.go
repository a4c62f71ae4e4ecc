package powerloss

import (
	"errors"
	"log"
	"sort"
	"syscall"
)

// Stats describes the layer's cache at one moment.
type Stats struct {
	DirtyBytes   int64 `json:"dirty_bytes"`   // cached bytes not yet durable
	DirtyFiles   int   `json:"dirty_files"`   // files with anything not yet durable
	PendingOps   int   `json:"pending_ops"`   // namespace ops waiting for a directory fsync
	Writes       int64 `json:"writes"`        // write calls seen
	WrittenBytes int64 `json:"written_bytes"` // bytes written through the mount
	SyncWrites   int64 `json:"sync_writes"`   // writes through O_SYNC/O_DSYNC handles
	Fsyncs       int64 `json:"fsyncs"`        // fsync/fdatasync on files
	DirFsyncs    int64 `json:"dir_fsyncs"`    // fsync on directories
	FilesTouched int   `json:"files_touched"` // distinct files written, resized or allocated
	Cut          bool  `json:"cut"`           // the power was cut
	DroppedBytes int64 `json:"dropped_bytes"` // bytes the cut dropped (0 before it)
	// Dirty lists the files with un-synced bytes, by path, so a caller can
	// tell data files from logs (the crash harness cuts while data pages
	// are in flight).
	Dirty []FileDirty `json:"dirty,omitempty"`
}

// FileDirty is one file's un-synced state.
type FileDirty struct {
	Path       string `json:"path"`        // relative to the mount, at first open
	DirtyBytes int64  `json:"dirty_bytes"` // cached bytes not yet durable
	Writes     int    `json:"writes"`      // un-synced write requests since the last sync
}

// CutOptions choose how the power goes out.
type CutOptions struct {
	// Torn keeps a random prefix of each un-synced write, ending on a 4 KiB
	// boundary, instead of dropping it whole.
	Torn bool `json:"torn"`
	// Seed drives the torn prefixes; the same writes and seed tear the same
	// way. Mount.Cut picks and reports one when it is 0.
	Seed int64 `json:"seed"`
}

// CutReport says what a cut dropped and kept.
type CutReport struct {
	Torn         bool      `json:"torn"`
	Seed         int64     `json:"seed"`
	DroppedBytes int64     `json:"dropped_bytes"` // cached bytes that never reached the backing directory
	KeptBytes    int64     `json:"kept_bytes"`    // bytes of torn prefixes written
	TornWrites   int       `json:"torn_writes"`   // writes kept only in part (torn pages), all files
	DroppedOps   int       `json:"dropped_ops"`   // namespace ops undone
	Files        []FileCut `json:"files"`         // files that had un-synced writes, by path
	Before       Stats     `json:"before"`        // the layer just before the cut
}

// Stats returns the current figures.
func (l *Layer) Stats() Stats {
	s := Stats{
		Writes:       l.writes.Load(),
		WrittenBytes: l.writtenBytes.Load(),
		SyncWrites:   l.syncWrites.Load(),
		Fsyncs:       l.fsyncs.Load(),
		DirFsyncs:    l.dirFsyncs.Load(),
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.mu.files {
		f.mu.Lock()
		if f.mu.fd >= 0 && f.mu.ov.pending() {
			s.DirtyFiles++
			s.DirtyBytes += f.mu.ov.dirty
			s.Dirty = append(s.Dirty, FileDirty{Path: f.name, DirtyBytes: f.mu.ov.dirty, Writes: len(f.mu.ov.spans)})
		}
		f.mu.Unlock()
	}
	s.PendingOps = len(l.mu.journal)
	s.FilesTouched = len(l.mu.touched)
	sort.Slice(s.Dirty, func(i, j int) bool { return s.Dirty[i].Path < s.Dirty[j].Path })
	if c := l.mu.cut; c != nil {
		s.Cut, s.DroppedBytes = true, c.DroppedBytes
	}
	return s
}

// toErrno maps an error to what the kernel is told. Errors that carry no
// errno are I/O errors of the layer itself: logged, then EIO.
func toErrno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	log.Printf("powerloss: %v", err)
	return syscall.EIO
}
