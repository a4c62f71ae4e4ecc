package hist

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The sparse wire encoding carries a worker's interval histograms to the
// coordinator, which decodes one per worker per op per interval: at 1,000
// workers HDR's compressed V2 encoding cost it a third of its CPU in
// base64, inflate and the zero-run parse (fleetsim's 5,000-write
// histograms, 1 s intervals). It lists only the populated buckets, as
// varints, uncompressed, so decoding is one pass that writes the Sparse
// buckets directly. It is not HdrHistogram's: histograms users export
// (hgrm, fio's JSON, merged intervals) stay in the V2 encoding, and every
// decoder here reads both (the first byte tells them apart: V2 travels as
// base64 text, which never holds a byte below '+').
//
// Layout: sparseMagic, SigFigs, uvarint Lowest, uvarint Highest (the
// geometry, checked as V2's header is), uvarint n, then n populated
// buckets in index order, each as its gap (the empty buckets since the
// previous populated one, or since index 0) and count >= 1: one byte
// 0gggcccc (gap < 8, count = cccc+1 <= 16) when they fit, else 0x80 then
// uvarint gap and uvarint count. A latency histogram's buckets are mostly
// adjacent with small counts (fleetsim's 5,000 writes: ~3,000 buckets,
// 95% of them one byte), so it is ~1.3 times the size of V2's deflated
// bytes (3.1 KB vs 2.4 KB) for an eighth of its decoding CPU.
const (
	sparseMagic = 0x01
	sparseLong  = 0x80 // a bucket whose gap or count needs varints
)

// IsSparseEncoding reports whether b is in the sparse wire encoding (else
// it is, if anything, HDR's V2).
func IsSparseEncoding(b []byte) bool { return len(b) > 0 && b[0] == sparseMagic }

// EncodeSparse returns h in the sparse wire encoding. It allocates only the
// result.
func (h *Histogram) EncodeSparse() []byte {
	n := 0
	for i := h.lo; i <= h.hi; i++ {
		if h.counts[i] != 0 {
			n++
		}
	}
	// Sized for the common case (one byte a bucket, an eighth of them
	// long); append grows it otherwise.
	return h.appendSparse(make([]byte, 0, 16+n+n/8), n)
}

// AppendSparse appends h in the sparse wire encoding to b.
func (h *Histogram) AppendSparse(b []byte) []byte {
	n := 0
	for i := h.lo; i <= h.hi; i++ {
		if h.counts[i] != 0 {
			n++
		}
	}
	return h.appendSparse(b, n)
}

func (h *Histogram) appendSparse(b []byte, n int) []byte {
	b = append(b, sparseMagic, SigFigs)
	b = binary.AppendUvarint(b, uint64(Lowest))
	b = binary.AppendUvarint(b, uint64(Highest))
	b = binary.AppendUvarint(b, uint64(n))
	prev := -1
	for i := h.lo; i <= h.hi; i++ {
		c := h.counts[i]
		if c == 0 {
			continue
		}
		if gap := i - prev - 1; gap < 8 && c <= 16 {
			b = append(b, byte(gap<<4|int(c-1)))
		} else {
			b = append(b, sparseLong)
			b = binary.AppendUvarint(b, uint64(gap))
			b = binary.AppendUvarint(b, uint64(c))
		}
		prev = i
	}
	return b
}

// parseSparseWire decodes the sparse wire encoding into s, with the checks
// V2's decoding makes: the geometry, indexes within it, the sum within
// MaxInt64, no trailing bytes. Its allocation is bounded by len(b).
func parseSparseWire(s *Sparse, b []byte) error {
	if len(b) < 2 || b[1] != SigFigs {
		return fmt.Errorf("%w: sparse: header too short or not %d digits", ErrBadEncoding, SigFigs)
	}
	p := b[2:]
	low, w := uvarintMin(p)
	if w <= 0 {
		return fmt.Errorf("%w: sparse: lowest value truncated", ErrBadEncoding)
	}
	p = p[w:]
	high, w := uvarintMin(p)
	if w <= 0 {
		return fmt.Errorf("%w: sparse: highest value truncated", ErrBadEncoding)
	}
	p = p[w:]
	if low != uint64(Lowest) || high != uint64(Highest) {
		return fmt.Errorf("%w: sparse: geometry %d..%d, want %d..%d", ErrBadEncoding, low, high, Lowest, Highest)
	}
	n, w := uvarintMin(p)
	if w <= 0 {
		return fmt.Errorf("%w: sparse: bucket count truncated", ErrBadEncoding)
	}
	p = p[w:]
	// Each bucket takes at least one byte: n is bounded by what is there
	// before anything is allocated for it.
	if n > uint64(countsLen) || n > uint64(len(p)) {
		return fmt.Errorf("%w: sparse: %d buckets in %d bytes (at most %d buckets)", ErrBadEncoding, n, len(p), countsLen)
	}
	if cap(s.buckets) < int(n) {
		s.buckets = make([]bucket, n)
	}
	out := s.buckets[:n]
	idx, total, i := int64(-1), int64(0), 0
	for k := range out {
		if i >= len(p) {
			return fmt.Errorf("%w: sparse: truncated at bucket %d of %d", ErrBadEncoding, k, n)
		}
		var gap, cnt uint64
		if b := p[i]; b < sparseLong {
			gap, cnt = uint64(b>>4), uint64(b&15)+1
			i++
		} else {
			if b != sparseLong {
				return fmt.Errorf("%w: sparse: bucket %d: byte %#x", ErrBadEncoding, k, b)
			}
			var w int
			if gap, w = uvarintMin(p[i+1:]); w <= 0 {
				return fmt.Errorf("%w: sparse: bucket %d: gap truncated or too long", ErrBadEncoding, k)
			}
			i += 1 + w
			if cnt, w = uvarintMin(p[i:]); w <= 0 {
				return fmt.Errorf("%w: sparse: bucket %d: count truncated or too long", ErrBadEncoding, k)
			}
			i += w
			// One encoding per histogram: a bucket that fits a byte is in one.
			if gap < 8 && cnt >= 1 && cnt <= 16 {
				return fmt.Errorf("%w: sparse: bucket %d: gap %d count %d in the long form", ErrBadEncoding, k, gap, cnt)
			}
		}
		if gap >= uint64(countsLen) || idx+1+int64(gap) >= int64(countsLen) {
			return fmt.Errorf("%w: sparse: bucket %d past the %d buckets", ErrBadEncoding, k, countsLen)
		}
		if cnt == 0 || cnt > uint64(math.MaxInt64-total) {
			return fmt.Errorf("%w: sparse: bucket %d: count %d zero or the sum past MaxInt64", ErrBadEncoding, k, cnt)
		}
		idx += 1 + int64(gap)
		out[k] = bucket{idx: idx, cnt: int64(cnt)}
		total += int64(cnt)
	}
	if i != len(p) {
		return fmt.Errorf("%w: sparse: %d bytes after the %d buckets", ErrBadEncoding, len(p)-i, n)
	}
	s.buckets, s.total = out, total
	return nil
}

// uvarintMin is binary.Uvarint that also refuses a value written in more
// bytes than it needs (a last byte of 0 after a continuation): one
// histogram has one encoding, so a stored snapshot means one thing.
func uvarintMin(b []byte) (uint64, int) {
	v, w := binary.Uvarint(b)
	if w > 1 && b[w-1] == 0 {
		return 0, -w
	}
	return v, w
}
