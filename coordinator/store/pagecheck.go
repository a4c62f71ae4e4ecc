package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"

	"golang.org/x/sys/unix"
)

// checkPages walks the page graph of the bbolt file at path from its file
// bytes, before bbolt's own code touches it: bbolt trusts its pages, and a
// damaged one makes it panic, fault, or (a branch that points back at
// itself) descend forever while its stack grows. Every page reachable from
// the newer valid meta page is read once: it must lie below the high-water
// mark and within the file, say it is itself, have the expected kind, hold
// its elements and keys, and be reached only once; the freelist must name
// pages below the mark. The layout is bbolt's file format version 2
// (go.etcd.io/bbolt/internal/common), little-endian as written on the
// machines writepath runs on.
func checkPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < pageHeader+64 {
		return fmt.Errorf("file of %d bytes holds no meta page", st.Size())
	}
	// Mapped read-only, read through bounds-checked slices; a fault (the
	// file shrinking meanwhile) is recovered by safe.
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("map: %w", err)
	}
	defer unix.Munmap(data)
	return safe(path, func() error { return checkMapped(data, releaseEvery) })
}

// checkMapped walks the mapped file, releasing its pages every releaseEach
// pages read.
func checkMapped(data []byte, releaseEach int) error {
	m, err := readMeta(data)
	if err != nil {
		return err
	}
	if m.pgid*uint64(m.pageSize) > uint64(len(data)) {
		return fmt.Errorf("file is truncated: its meta page counts %d pages of %d bytes, the file holds %d bytes", m.pgid, m.pageSize, len(data))
	}
	w := &pageWalk{data: data, m: m, seen: make([]uint64, m.pgid/64+1), releaseEach: releaseEach}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	return w.tree(m.root, 0)
}

// Page layout constants of bbolt's format version 2.
const (
	pageHeader   = 16 // id u64, flags u16, count u16, overflow u32
	elemSize     = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	branchFlag   = 0x01
	leafFlag     = 0x02
	freelistFlag = 0x10
	bucketFlag   = 0x01 // a leaf element that is a nested bucket
	bucketHeader = 16   // root u64, sequence u64
	boltMagic    = 0xED0CDAED
	boltVersion  = 2
	noFreelist   = ^uint64(0)
	// maxTreeDepth bounds B+tree levels plus bucket nesting along a path.
	maxTreeDepth = 64
)

type meta struct {
	pageSize                 uint32
	root, freelist, pgid, tx uint64
}

// readMeta returns the valid meta page with the higher transaction id, as
// bbolt picks it.
func readMeta(data []byte) (meta, error) {
	var best meta
	found := false
	for i, off := range []int{0, -1} {
		if i == 1 {
			off = 4096 // the first meta's page size unknown: bbolt's default
			if found {
				off = int(best.pageSize)
			}
		}
		if off+pageHeader+64 > len(data) {
			continue
		}
		mb := data[off+pageHeader:][:64]
		h := fnv.New64a()
		h.Write(mb[:56])
		le := binary.LittleEndian
		if le.Uint32(mb[0:]) != boltMagic || le.Uint32(mb[4:]) != boltVersion || le.Uint64(mb[56:]) != h.Sum64() {
			continue
		}
		m := meta{pageSize: le.Uint32(mb[8:]), root: le.Uint64(mb[16:]), freelist: le.Uint64(mb[32:]), pgid: le.Uint64(mb[40:]), tx: le.Uint64(mb[48:])}
		if m.pageSize < 512 || m.pageSize > 1<<20 {
			continue
		}
		if !found || m.tx > best.tx {
			best, found = m, true
		}
	}
	if !found {
		return meta{}, errors.New("no valid meta page")
	}
	return best, nil
}

type pageWalk struct {
	data []byte
	m    meta
	seen []uint64 // a bit per page below the high-water mark
	read int      // pages read since the mapping's pages were last released
	// releaseEach is how many pages are read between two releases.
	releaseEach int
}

// page returns page id with its overflow pages, checking its place, its
// own id and that no page is reached twice.
func (w *pageWalk) page(id uint64, want uint16) ([]byte, error) {
	if id < 2 || id >= w.m.pgid {
		return nil, fmt.Errorf("page %d: outside 2..%d", id, w.m.pgid-1)
	}
	ps := uint64(w.m.pageSize)
	hdr := w.data[id*ps:][:pageHeader]
	le := binary.LittleEndian
	if got := le.Uint64(hdr); got != id {
		return nil, fmt.Errorf("page %d says it is page %d", id, got)
	}
	if fl := le.Uint16(hdr[8:]); fl&want == 0 || fl&^(branchFlag|leafFlag|freelistFlag) != 0 {
		return nil, fmt.Errorf("page %d: flags %#x, want %#x", id, fl, want)
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	if overflow >= w.m.pgid-id {
		return nil, fmt.Errorf("page %d: %d overflow pages run past page %d", id, overflow, w.m.pgid-1)
	}
	if w.read += int(overflow) + 1; w.read >= w.releaseEach {
		// The slices already handed out stay valid: released pages of
		// this read-only file mapping fault back from the page cache.
		_ = unix.Madvise(w.data, unix.MADV_DONTNEED)
		w.read = 0
	}
	for p := id; p <= id+overflow; p++ {
		if w.seen[p/64]&(1<<(p%64)) != 0 {
			return nil, fmt.Errorf("page %d is reached twice", p)
		}
		w.seen[p/64] |= 1 << (p % 64)
	}
	return w.data[id*ps : (id+1+overflow)*ps], nil
}

func (w *pageWalk) freelist(id uint64) error {
	b, err := w.page(id, freelistFlag)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	le := binary.LittleEndian
	n, start := uint64(le.Uint16(b[10:])), uint64(pageHeader)
	if n == 0xFFFF { // the count overflowed into the first element
		if len(b) < pageHeader+8 {
			return fmt.Errorf("freelist page %d: too short", id)
		}
		n, start = le.Uint64(b[pageHeader:]), pageHeader+8
	}
	if n > (uint64(len(b))-start)/8 {
		return fmt.Errorf("freelist page %d: %d ids do not fit", id, n)
	}
	for i := range n {
		if p := le.Uint64(b[start+8*i:]); p < 2 || p >= w.m.pgid {
			return fmt.Errorf("freelist page %d: frees page %d, outside 2..%d", id, p, w.m.pgid-1)
		}
	}
	return nil
}

// tree checks the B+tree rooted at page id and every bucket in it.
func (w *pageWalk) tree(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: deeper than %d levels", id, maxTreeDepth)
	}
	b, err := w.page(id, branchFlag|leafFlag)
	if err != nil {
		return err
	}
	return w.node(b, id, depth)
}

// node checks one page's elements; b is the page (or an inline bucket's
// page) from its header on.
func (w *pageWalk) node(b []byte, id uint64, depth int) error {
	le := binary.LittleEndian
	if len(b) < pageHeader {
		return fmt.Errorf("page %d: too short", id)
	}
	flags, n := le.Uint16(b[8:]), int(le.Uint16(b[10:]))
	if pageHeader+n*elemSize > len(b) {
		return fmt.Errorf("page %d: %d elements do not fit", id, n)
	}
	branch := flags&branchFlag != 0
	if branch && n == 0 {
		return fmt.Errorf("page %d: an empty branch", id)
	}
	for i := range n {
		e := pageHeader + i*elemSize
		if branch {
			if err := span(b, e, le.Uint32(b[e:]), le.Uint32(b[e+4:]), 0); err != nil {
				return fmt.Errorf("page %d element %d: %w", id, i, err)
			}
			if err := w.tree(le.Uint64(b[e+8:]), depth+1); err != nil {
				return err
			}
			continue
		}
		pos, ks, vs := le.Uint32(b[e+4:]), le.Uint32(b[e+8:]), le.Uint32(b[e+12:])
		if err := span(b, e, pos, ks, vs); err != nil {
			return fmt.Errorf("page %d element %d: %w", id, i, err)
		}
		if le.Uint32(b[e:])&bucketFlag == 0 {
			continue
		}
		v := b[e+int(pos)+int(ks):][:vs]
		if err := w.bucket(v, id, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// bucket checks a nested bucket's value: a root page, or an inline page.
func (w *pageWalk) bucket(v []byte, id uint64, depth int) error {
	if len(v) < bucketHeader {
		return fmt.Errorf("page %d: a bucket value of %d bytes", id, len(v))
	}
	if root := binary.LittleEndian.Uint64(v); root != 0 {
		return w.tree(root, depth)
	}
	inline := v[bucketHeader:]
	if len(inline) < pageHeader || binary.LittleEndian.Uint16(inline[8:])&leafFlag == 0 {
		return fmt.Errorf("page %d: an inline bucket that is no leaf", id)
	}
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: deeper than %d levels", id, maxTreeDepth)
	}
	return w.node(inline, id, depth)
}

// span checks that a key (and value) at pos from the element at offset e
// lie inside the page.
func span(b []byte, e int, pos, ks, vs uint32) error {
	end := uint64(e) + uint64(pos) + uint64(ks) + uint64(vs)
	if end > uint64(len(b)) {
		return fmt.Errorf("key/value at +%d (%d+%d bytes) past the page's %d bytes", pos, ks, vs, len(b))
	}
	return nil
}
