package powerloss

import (
	"sort"
)

// extent is one run of dirty bytes: data belongs at file offset off.
type extent struct {
	off  int64
	data []byte
}

func (e extent) end() int64 { return e.off + int64(len(e.data)) }

// span is a byte range [off, end) of one write, kept (without its data) so
// that a torn cut can choose a prefix of every write separately.
type span struct{ off, end int64 }

// maxSpans bounds the write log of one file between syncs; past it the
// extents themselves stand in for the writes (see overlay.tornSpans).
const maxSpans = 1 << 20

// overlay is the non-durable state of one file on top of its durable
// backing file. Invariants:
//   - exts is sorted by off, extents do not overlap and lie below size;
//   - backing bytes at offsets >= trunc are logically gone (a pending
//     shrink): they read as zero unless an extent covers them;
//   - trunc <= durable, and trunc == durable when no shrink is pending.
//
// The logical content of byte i is: the extent byte covering i if any,
// else the backing byte if i < trunc, else zero; bytes >= size do not exist.
type overlay struct {
	exts     []extent
	size     int64 // logical size
	durable  int64 // size of the backing file
	trunc    int64 // backing bytes at or past trunc are logically zero
	dirty    int64 // sum of extent lengths
	spans    []span
	overflow bool // spans were dropped: torn cut uses exts instead
}

func newOverlay(durable int64) *overlay {
	return &overlay{size: durable, durable: durable, trunc: durable}
}

// pending reports whether anything is not yet durable.
func (o *overlay) pending() bool {
	return len(o.exts) > 0 || o.size != o.durable || o.trunc != o.durable
}

// write records p at off. Overlapping dirty bytes are replaced; an extent
// that ends exactly at off is extended in place so that sequential appends
// (redo logs) cost amortised O(len(p)), not a copy of the run.
func (o *overlay) write(off int64, p []byte) {
	if len(p) == 0 {
		return
	}
	end := off + int64(len(p))
	o.logSpan(off, end)
	if end > o.size {
		o.size = end
	}
	// i: first extent with end >= off (touching or overlapping).
	i := sort.Search(len(o.exts), func(k int) bool { return o.exts[k].end() >= off })
	if i < len(o.exts) && o.exts[i].off <= off && o.exts[i].end() >= end {
		copy(o.exts[i].data[off-o.exts[i].off:], p) // fully inside one extent
		return
	}
	// j: first extent that starts after end (neither touching nor overlapping).
	j := sort.Search(len(o.exts), func(k int) bool { return o.exts[k].off > end })
	merged := o.merge(o.exts[i:j], off, p)
	if j > i {
		o.exts[i] = merged
		o.exts = append(o.exts[:i+1], o.exts[j:]...)
		return
	}
	o.exts = append(o.exts, extent{})
	copy(o.exts[i+1:], o.exts[i:])
	o.exts[i] = merged
}

// merge folds p at off together with the extents it touches into one extent.
func (o *overlay) merge(touched []extent, off int64, p []byte) extent {
	end := off + int64(len(p))
	var head []byte
	start := off
	if len(touched) > 0 && touched[0].off < off {
		start = touched[0].off
		head = touched[0].data[:off-start] // reuse its capacity for appends
	}
	var tail []byte
	if len(touched) > 0 && touched[len(touched)-1].end() > end {
		last := touched[len(touched)-1]
		tail = last.data[end-last.off:]
	}
	for _, e := range touched {
		o.dirty -= int64(len(e.data))
	}
	// head and tail never share an array: an extent with bytes on both
	// sides of [off, end) is the fully-inside case handled by write.
	data := append(append(head, p...), tail...)
	o.dirty += int64(len(data))
	return extent{off: start, data: data}
}

func (o *overlay) logSpan(off, end int64) {
	if o.overflow {
		return
	}
	if len(o.spans) >= maxSpans {
		o.spans, o.overflow = nil, true
		return
	}
	o.spans = append(o.spans, span{off, end})
}

// truncate sets the logical size. Shrinking drops dirty bytes past size and
// hides backing bytes past it; growing exposes zeros.
func (o *overlay) truncate(size int64) {
	if size < o.trunc {
		o.trunc = size
	}
	o.size = size
	k := sort.Search(len(o.exts), func(k int) bool { return o.exts[k].end() > size })
	if k == len(o.exts) {
		return
	}
	for _, e := range o.exts[k:] {
		o.dirty -= int64(len(e.data))
	}
	if o.exts[k].off < size {
		e := o.exts[k]
		e.data = e.data[: size-e.off : size-e.off] // cap: an append must not resurrect bytes
		o.dirty += int64(len(e.data))
		o.exts[k] = e
		k++
	}
	o.exts = o.exts[:k]
}

// read fills dst with the logical content at off and returns how many bytes
// exist there. readBacking reads durable bytes (short reads mean zeros).
func (o *overlay) read(dst []byte, off int64, readBacking func([]byte, int64) error) (int, error) {
	if off >= o.size {
		return 0, nil
	}
	if rest := o.size - off; int64(len(dst)) > rest {
		dst = dst[:rest]
	}
	clear(dst)
	end := off + int64(len(dst))
	if off < o.trunc {
		b := dst[:min(end, o.trunc)-off]
		if err := readBacking(b, off); err != nil {
			return 0, err
		}
	}
	i := sort.Search(len(o.exts), func(k int) bool { return o.exts[k].end() > off })
	for ; i < len(o.exts) && o.exts[i].off < end; i++ {
		e := o.exts[i]
		lo, hi := max(e.off, off), min(e.end(), end)
		copy(dst[lo-off:hi-off], e.data[lo-e.off:hi-e.off])
	}
	return len(dst), nil
}

// reset forgets everything pending: the file is now exactly its backing
// file of size durable.
func (o *overlay) reset(durable int64) {
	*o = overlay{size: durable, durable: durable, trunc: durable}
}

// tornSpans lists the writes for a torn cut, in the order they were made.
func (o *overlay) tornSpans() []span {
	if !o.overflow {
		return o.spans
	}
	s := make([]span, len(o.exts))
	for i, e := range o.exts {
		s[i] = span{e.off, e.end()}
	}
	return s
}
