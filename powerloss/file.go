package powerloss

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// file is the layer's state for one inode: a read-write descriptor of the
// backing inode (whose bytes are exactly the durable content) and the
// overlay of what is not durable yet. It is shared by every open handle and
// outlives the last close while anything is pending, like a page cache.
// Holding fd open also pins the inode number, so the key cannot be reused
// by another file while this state exists.
type file struct {
	ino     uint64
	name    string      // path at first open, relative to the mount; names the file in reports and seeds torn cuts
	touched atomic.Bool // counted in Stats.FilesTouched
	mu      struct {
		sync.Mutex
		fd    int // -1 once closed
		ov    *overlay
		opens int // open handles
	}
}

func newFile(ino uint64, name string, fd int) (*file, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat %s: %w", name, err)
	}
	f := &file{ino: ino, name: name}
	f.mu.fd = fd
	f.mu.ov = newOverlay(st.Size)
	return f, nil
}

func (f *file) size() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.ov.size
}

func (f *file) write(p []byte, off int64, sync bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return unix.EIO
	}
	f.mu.ov.write(off, p)
	if sync {
		return f.flushLocked()
	}
	return nil
}

func (f *file) read(dst []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return 0, unix.EIO
	}
	return f.mu.ov.read(dst, off, f.preadLocked)
}

// preadLocked reads durable bytes; bytes past the backing EOF stay zero.
func (f *file) preadLocked(dst []byte, off int64) error {
	for len(dst) > 0 {
		n, err := unix.Pread(f.mu.fd, dst, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s at %d: %w", f.name, off, err)
		}
		if n == 0 {
			return nil
		}
		dst, off = dst[n:], off+int64(n)
	}
	return nil
}

func (f *file) truncate(size int64, sync bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return unix.EIO
	}
	f.mu.ov.truncate(size)
	if sync {
		return f.flushLocked()
	}
	return nil
}

// allocate handles fallocate(2). Mode 0 (posix_fallocate) and KEEP_SIZE
// reserve space in the backing file beyond its durable EOF only (KEEP_SIZE
// never changes content) and grow the logical size in the overlay, so the
// new size is durable at the next fsync like any other size change.
// Punching or zeroing is written as zeros into the overlay, bounded so a
// huge hole cannot exhaust memory; past the bound it is refused and glibc
// or the caller falls back.
func (f *file) allocate(off, length int64, mode uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return unix.EIO
	}
	switch mode &^ unix.FALLOC_FL_KEEP_SIZE {
	case 0:
		if err := unix.Fallocate(f.mu.fd, unix.FALLOC_FL_KEEP_SIZE, off, length); err != nil {
			return fmt.Errorf("fallocate %s: %w", f.name, err)
		}
		if mode&unix.FALLOC_FL_KEEP_SIZE == 0 && off+length > f.mu.ov.size {
			f.mu.ov.truncate(off + length)
		}
		return nil
	case unix.FALLOC_FL_PUNCH_HOLE, unix.FALLOC_FL_ZERO_RANGE:
		return f.zeroLocked(off, length, mode&unix.FALLOC_FL_KEEP_SIZE != 0)
	}
	return unix.EOPNOTSUPP
}

// maxZeroRange bounds a punched or zeroed range kept as overlay bytes.
const maxZeroRange = 16 << 20

func (f *file) zeroLocked(off, length int64, keepSize bool) error {
	if length > maxZeroRange {
		return unix.EOPNOTSUPP
	}
	end := off + length
	if keepSize {
		end = min(end, f.mu.ov.size)
	}
	if end > off {
		f.mu.ov.write(off, make([]byte, end-off))
	}
	return nil
}

// fsync makes everything pending on this file durable.
func (f *file) fsync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return unix.EIO
	}
	return f.flushLocked()
}

// flushLocked writes the overlay to the backing file and syncs it: first
// the pending shrink (so hidden bytes become real zeros or vanish), then
// the extents, then the final size. Large files cost only their dirty
// bytes: nothing else is read or copied.
func (f *file) flushLocked() error {
	ov := f.mu.ov
	if !ov.pending() {
		return nil
	}
	cur := ov.durable
	if ov.trunc < ov.durable {
		if err := unix.Ftruncate(f.mu.fd, ov.trunc); err != nil {
			return fmt.Errorf("truncate %s: %w", f.name, err)
		}
		cur = ov.trunc
	}
	for _, e := range ov.exts {
		if err := pwriteAll(f.mu.fd, e.data, e.off); err != nil {
			return fmt.Errorf("write %s at %d: %w", f.name, e.off, err)
		}
		cur = max(cur, e.end())
	}
	if cur != ov.size {
		if err := unix.Ftruncate(f.mu.fd, ov.size); err != nil {
			return fmt.Errorf("resize %s: %w", f.name, err)
		}
	}
	if err := unix.Fdatasync(f.mu.fd); err != nil {
		return fmt.Errorf("sync %s: %w", f.name, err)
	}
	ov.reset(ov.size)
	return nil
}

func pwriteAll(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		n, err := unix.Pwrite(fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// FileCut says what a cut did to one file.
type FileCut struct {
	Path       string `json:"path"`
	DirtyBytes int64  `json:"dirty_bytes"` // not durable at the cut
	KeptBytes  int64  `json:"kept_bytes"`  // torn prefixes written anyway
	Writes     int    `json:"writes"`      // un-synced writes considered
	// TornWrites counts overwrites of durable bytes kept only in part (a
	// prefix ending at an inner 4 KiB boundary): with 16 KiB pages, each
	// is a torn page. Writes past the durable end are not counted: their
	// growth was never durable, so their loss is not a tear.
	TornWrites int `json:"torn_writes,omitempty"`
	// Size is the file's size as its users saw it at the cut; DurableSize
	// the size that survived (growth not made durable is gone).
	Size        int64 `json:"size"`
	DurableSize int64 `json:"durable_size"`
	// Lost lists the un-synced writes the cut did not keep whole, in
	// write order: at most maxLostWrites, torn ones chosen before dropped
	// ones; LostOmitted counts those left out.
	Lost        []LostWrite `json:"lost,omitempty"`
	LostOmitted int         `json:"lost_omitted,omitempty"`
}

// LostWrite is one un-synced write that a cut did not keep whole: enough
// to say which pages of a file a power cut tore or lost, and whether the
// write had grown the file.
type LostWrite struct {
	// Seq is its place among the file's writes since its last sync (0 is
	// the first). Past maxSpans writes the layer no longer tells writes
	// apart: Seq then numbers the dirty extents, which stand in for them.
	Seq    int   `json:"seq"`
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
	// Kept is how many bytes of its prefix reached the disk (torn cuts);
	// 0: dropped whole.
	Kept int64 `json:"kept"`
	// Torn: a prefix ending inside it was kept, and all of it lay within
	// the durable size (an overwrite kept in part: what FileCut.TornWrites
	// counts).
	Torn bool `json:"torn,omitempty"`
	// Extends: it reached past the durable size; the part beyond it was
	// never durable and is gone, whatever the tear.
	Extends bool `json:"extends,omitempty"`
}

// maxLostWrites bounds FileCut.Lost, so that a cut of a busy log with
// thousands of un-synced appends stays a small report.
const maxLostWrites = 256

// lossLog gathers the lost writes of one file, keeping torn ones first.
type lossLog struct {
	torn, other []LostWrite
	total       int
}

func (l *lossLog) add(w LostWrite) {
	l.total++
	switch {
	case w.Torn && len(l.torn) < maxLostWrites:
		l.torn = append(l.torn, w)
	case !w.Torn && len(l.other) < maxLostWrites:
		l.other = append(l.other, w)
	}
}

// list returns at most maxLostWrites of them in write order, and how many
// were left out.
func (l *lossLog) list() ([]LostWrite, int) {
	out := append(l.torn, l.other[:min(len(l.other), maxLostWrites-len(l.torn))]...)
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, l.total - len(out)
}

// cut drops everything pending. With torn it first keeps a prefix of each
// un-synced write, ending on a 4 KiB file-offset boundary, chosen by an RNG
// seeded from (seed, path), so the outcome depends only on the seed and the
// writes. Prefixes are clipped to the durable size: growing the file was
// never made durable. The descriptor is closed; the state is dead after.
func (f *file) cut(torn bool, seed int64) (FileCut, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return FileCut{Path: f.name}, nil
	}
	ov := f.mu.ov
	fc := FileCut{Path: f.name, DirtyBytes: ov.dirty, Size: ov.size, DurableSize: ov.durable}
	var err error
	var lost lossLog
	if ov.pending() {
		spans := ov.tornSpans()
		fc.Writes = len(spans)
		if torn {
			fc.TornWrites, fc.KeptBytes, err = f.tearLocked(spans, seed, &lost)
		} else {
			for i, s := range spans {
				lost.add(LostWrite{Seq: i, Offset: s.off, Length: s.end - s.off, Extends: s.end > ov.durable})
			}
		}
	}
	fc.Lost, fc.LostOmitted = lost.list()
	if cerr := unix.Close(f.mu.fd); cerr != nil && err == nil {
		err = fmt.Errorf("close %s: %w", f.name, cerr)
	}
	f.mu.fd = -1
	return fc, err
}

// tearLocked writes the kept prefix of every un-synced write in spans and
// notes in lost each write not kept whole.
func (f *file) tearLocked(spans []span, seed int64, lost *lossLog) (torn int, kept int64, err error) {
	ov := f.mu.ov
	h := fnv.New64a()
	h.Write([]byte(f.name))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	for i, s := range spans {
		c := tornPrefix(rng, s)
		c = min(c, ov.durable)
		w := LostWrite{Seq: i, Offset: s.off, Length: s.end - s.off, Kept: max(c-s.off, 0), Extends: s.end > ov.durable}
		// An overwrite kept in part, not clipped growth.
		w.Torn = c > s.off && c < s.end && s.end <= ov.durable
		if c < s.end {
			lost.add(w)
		}
		if c <= s.off {
			continue
		}
		if w.Torn {
			torn++
		}
		buf := make([]byte, c-s.off)
		if _, err := ov.read(buf, s.off, f.preadLocked); err != nil {
			return torn, kept, err
		}
		if err := pwriteAll(f.mu.fd, buf, s.off); err != nil {
			return torn, kept, fmt.Errorf("tear %s at %d: %w", f.name, s.off, err)
		}
		kept += c - s.off
	}
	if err := unix.Fdatasync(f.mu.fd); err != nil {
		return torn, kept, fmt.Errorf("sync %s: %w", f.name, err)
	}
	return torn, kept, nil
}

// tornBlock is the unit a torn write keeps: a 4 KiB sector of the device.
const tornBlock = 4096

// tornPrefix picks where the write s stops reaching the disk: s.off
// (nothing), s.end (all of it), or a 4 KiB file-offset boundary in between,
// each equally likely.
func tornPrefix(rng *rand.Rand, s span) int64 {
	first := (s.off/tornBlock + 1) * tornBlock
	inner := int64(0)
	if first < s.end {
		inner = (s.end-1-first)/tornBlock + 1
	}
	k := rng.Int64N(inner + 2)
	switch k {
	case 0:
		return s.off
	case inner + 1:
		return s.end
	}
	return first + (k-1)*tornBlock
}
