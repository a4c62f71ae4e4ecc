package powerloss

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Layer is the durability state of one mount: the open files with their
// overlays and the namespace journal. The view directory is what the mount
// shows; the backing directory holds exactly the durable state.
type Layer struct {
	backing string // durable state
	view    string // the namespace as the mount shows it; regular files are hard links to backing or staging inodes
	staging string // inodes created but not yet durably named

	isCut atomic.Bool // after a cut every operation fails with EIO

	writes, writtenBytes, syncWrites, fsyncs, dirFsyncs atomic.Int64

	mu struct {
		sync.Mutex
		files   map[uint64]*file    // by inode number
		journal []op                // namespace ops not yet durable, in order
		touched map[uint64]struct{} // inodes ever written or resized
		stageN  uint64              // last staging name handed out
		cut     *CutReport          // set by the cut
	}
}

func newLayer(w workDir) *Layer {
	l := &Layer{backing: w.backing, view: w.view, staging: w.staging}
	l.mu.files = map[uint64]*file{}
	l.mu.touched = map[uint64]struct{}{}
	return l
}

// acquire returns the state of inode ino, opening the backing inode through
// viewPath the first time, and counts one more open handle.
func (l *Layer) acquire(ino uint64, rel string) (*file, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isCut.Load() {
		return nil, unix.EIO
	}
	f := l.mu.files[ino]
	if f == nil {
		fd, err := unix.Open(filepath.Join(l.view, rel), unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, err
		}
		if f, err = newFile(ino, rel, fd); err != nil {
			unix.Close(fd)
			return nil, err
		}
		l.mu.files[ino] = f
	}
	f.mu.Lock()
	f.mu.opens++
	f.mu.Unlock()
	return f, nil
}

// adopt registers the state of a file just created with descriptor fd.
func (l *Layer) adoptLocked(ino uint64, rel string, fd int) (*file, error) {
	f, err := newFile(ino, rel, fd)
	if err != nil {
		return nil, err
	}
	f.mu.opens = 1
	l.mu.files[ino] = f
	return f, nil
}

// release drops one open handle; a state with nothing pending and no
// handle is forgotten (its content is all in the backing inode).
func (l *Layer) release(f *file) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.opens--
	if f.mu.opens > 0 || f.mu.fd < 0 || f.mu.ov.pending() {
		return
	}
	unix.Close(f.mu.fd)
	f.mu.fd = -1
	if l.mu.files[f.ino] == f {
		delete(l.mu.files, f.ino)
	}
}

// lookup returns the live state of ino, or nil.
func (l *Layer) lookup(ino uint64) *file {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.files[ino]
}

// touch counts f among the files changed, taking the layer lock only the
// first time per state (writes are the hot path).
func (l *Layer) touch(f *file) {
	if f.touched.Swap(true) {
		return
	}
	l.mu.Lock()
	l.mu.touched[f.ino] = struct{}{}
	l.mu.Unlock()
}

// record appends a namespace op; the caller holds l.mu and has just done
// the op in the view, so the journal order is the view's order.
func (l *Layer) recordLocked(o op) {
	l.mu.journal = append(l.mu.journal, o)
}

// nextStageLocked names a new staging file.
func (l *Layer) nextStageLocked() string {
	l.mu.stageN++
	return fmt.Sprintf("%016x", l.mu.stageN)
}

// syncDir makes durable every journaled op up to the last one that changed
// directory dir (a view inode number): the journal is committed in order,
// as a journaling file system does, so the backing namespace always equals
// the view's namespace at some past moment.
func (l *Layer) syncDir(dir uint64) error {
	l.dirFsyncs.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isCut.Load() {
		return unix.EIO
	}
	k := lastTouching(l.mu.journal, dir)
	return l.commitLocked(k + 1)
}

func (l *Layer) commitLocked(n int) error {
	if n == 0 {
		return nil
	}
	done, err := applyOps(l.mu.journal[:n], l.backing, l.staging)
	l.mu.journal = append([]op(nil), l.mu.journal[done:]...)
	return err
}

// SyncAll makes everything durable (a clean shutdown): every file's
// overlay, then the whole journal.
func (l *Layer) SyncAll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isCut.Load() {
		return nil
	}
	var errs []error
	for _, f := range l.sortedFilesLocked() {
		errs = append(errs, f.fsync())
	}
	errs = append(errs, l.commitLocked(len(l.mu.journal)))
	return errors.Join(errs...)
}

func (l *Layer) sortedFilesLocked() []*file {
	fs := make([]*file, 0, len(l.mu.files))
	for _, f := range l.mu.files {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	return fs
}

// Cut simulates a power cut: from now on every operation fails with EIO,
// every non-durable write and namespace op is dropped (with torn, a prefix
// of each un-synced write is kept, see file.cut), and the staging inodes
// are removed. The backing directory is then exactly what survived. A
// second Cut returns the first report.
func (l *Layer) Cut(opts CutOptions) (CutReport, error) {
	stats := l.Stats()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.cut != nil {
		return *l.mu.cut, nil
	}
	l.isCut.Store(true)
	rep := CutReport{Torn: opts.Torn, Seed: opts.Seed, DroppedOps: len(l.mu.journal), Before: stats}
	var errs []error
	for _, f := range l.sortedFilesLocked() {
		fc, err := f.cut(opts.Torn, opts.Seed)
		errs = append(errs, err)
		rep.DroppedBytes += fc.DirtyBytes - fc.KeptBytes
		rep.KeptBytes += fc.KeptBytes
		rep.TornWrites += fc.TornWrites
		if fc.DirtyBytes > 0 || fc.Writes > 0 {
			rep.Files = append(rep.Files, fc)
		}
	}
	l.mu.journal = nil
	errs = append(errs, os.RemoveAll(l.staging))
	l.mu.cut = &rep
	return rep, errors.Join(errs...)
}

// closeFiles closes every backing descriptor (at unmount).
func (l *Layer) closeFiles() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ino, f := range l.mu.files {
		f.mu.Lock()
		if f.mu.fd >= 0 {
			unix.Close(f.mu.fd)
			f.mu.fd = -1
		}
		f.mu.Unlock()
		delete(l.mu.files, ino)
	}
}
