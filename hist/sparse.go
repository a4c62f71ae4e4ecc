package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Merging many received histograms (a coordinator merges one per worker per
// interval) cannot afford Decode then Merge: each Decode allocates a dense
// counts array of the shared geometry (~270 KB) and each Merge scans all of
// it. A Decoder instead parses the V2 payload into a Sparse list of the
// populated buckets, reusing its buffers and inflater, and an Accumulator
// adds Sparse lists into one dense counts array by index; every histogram
// of the shared geometry indexes buckets alike, so this is exactly Merge.

const (
	v2CompressedCookie = 0x1c849304
	v2Cookie           = 0x1c849303
	v2HeaderLen        = 40
)

// Sparse is a decoded histogram holding only its populated buckets, as
// indexes into the shared geometry's counts.
type Sparse struct {
	buckets []bucket
	total   int64
}

// bucket is one populated bucket: its count at index idx.
type bucket struct {
	idx int64
	cnt int64
}

// Count is the number of recorded values.
func (s *Sparse) Count() int64 { return s.total }

// Decoder decodes encoded histograms into Sparse form, reusing its buffers:
// the Sparse values it returns stay valid until its Reset. A Decoder is not
// safe for concurrent use; use one per goroutine.
type Decoder struct {
	raw, payload []byte
	z            io.ReadCloser
	br           bytes.Reader
	sparse       []*Sparse // handed out since Reset, reused after it
	used         int
}

// Reset lets the Decoder reuse the memory of every Sparse it returned.
func (d *Decoder) Reset() { d.used = 0 }

// next returns a cleared Sparse from the free list.
func (d *Decoder) next() *Sparse {
	if d.used == len(d.sparse) {
		d.sparse = append(d.sparse, &Sparse{})
	}
	s := d.sparse[d.used]
	d.used++
	s.buckets, s.total = s.buckets[:0], 0
	return s
}

// DecodeSparse parses an encoded histogram, in HDR's compressed V2 encoding
// or the sparse wire encoding, with the same size and geometry checks as
// Decode, and checks the payload against the geometry.
func (d *Decoder) DecodeSparse(b []byte) (*Sparse, error) {
	if len(b) > MaxEncodedSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrBadEncoding, len(b), MaxEncodedSize)
	}
	if IsSparseEncoding(b) {
		s := d.next()
		if err := parseSparseWire(s, b); err != nil {
			return nil, err
		}
		return s, nil
	}
	compressed, err := d.unwrap(b)
	if err != nil {
		return nil, err
	}
	payload, err := d.inflate(compressed)
	if err != nil {
		return nil, err
	}
	s := d.next()
	if err := parsePayload(s, payload); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	return s, nil
}

// unwrap base64-decodes b and returns the zlib stream after the 8-byte
// compressed-encoding header.
func (d *Decoder) unwrap(b []byte) ([]byte, error) {
	need := base64.StdEncoding.DecodedLen(len(b))
	if cap(d.raw) < need {
		d.raw = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:need], b)
	if err != nil {
		return nil, fmt.Errorf("%w: base64: %v", ErrBadEncoding, err)
	}
	raw := d.raw[:n]
	if len(raw) < 8 {
		return nil, fmt.Errorf("%w: %d bytes, too short", ErrBadEncoding, len(raw))
	}
	if cookie := binary.BigEndian.Uint32(raw) &^ 0xf0; cookie != v2CompressedCookie {
		return nil, fmt.Errorf("%w: cookie %#x, want V2 compressed", ErrBadEncoding, cookie)
	}
	clen := binary.BigEndian.Uint32(raw[4:])
	if uint64(clen) > uint64(len(raw)-8) {
		return nil, fmt.Errorf("%w: compressed length %d past the %d bytes there", ErrBadEncoding, clen, len(raw)-8)
	}
	return raw[8 : 8+clen], nil
}

// inflate decompresses the V2 header, checks the geometry, and returns the
// payload. Inflation is bounded by the payload length the geometry allows.
func (d *Decoder) inflate(compressed []byte) ([]byte, error) {
	d.br.Reset(compressed)
	if err := d.resetInflater(); err != nil {
		return nil, fmt.Errorf("%w: zlib: %v", ErrBadEncoding, err)
	}
	var h [v2HeaderLen]byte
	if _, err := io.ReadFull(d.z, h[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBadEncoding, err)
	}
	if err := checkV2Header(h[:]); err != nil {
		return nil, err
	}
	plen := int(binary.BigEndian.Uint32(h[4:8]))
	if plen < 0 || plen > countsLen*9 {
		return nil, fmt.Errorf("%w: payload length %d, limit %d", ErrBadEncoding, plen, countsLen*9)
	}
	if cap(d.payload) < plen+1 {
		d.payload = make([]byte, plen+1)
	}
	// Read one byte past the length to detect trailing data; reaching EOF
	// also verifies the zlib checksum.
	n, err := io.ReadFull(d.z, d.payload[:plen+1])
	if err != io.ErrUnexpectedEOF || n != plen {
		return nil, fmt.Errorf("%w: payload of %d bytes, header says %d (%v)", ErrBadEncoding, n, plen, err)
	}
	return d.payload[:plen], nil
}

func (d *Decoder) resetInflater() error {
	if d.z == nil {
		z, err := zlib.NewReader(&d.br)
		d.z = z
		return err
	}
	return d.z.(zlib.Resetter).Reset(&d.br, nil)
}

// checkV2Header checks the uncompressed V2 header: cookie, index offset
// and the shared geometry.
func checkV2Header(h []byte) error {
	if cookie := binary.BigEndian.Uint32(h) &^ 0xf0; cookie != v2Cookie {
		return fmt.Errorf("%w: inner cookie %#x", ErrBadEncoding, cookie)
	}
	if off := binary.BigEndian.Uint32(h[8:12]); off != 0 {
		return fmt.Errorf("%w: normalizing index offset %d", ErrBadEncoding, int32(off))
	}
	sig := int32(binary.BigEndian.Uint32(h[12:16]))
	low := int64(binary.BigEndian.Uint64(h[16:24]))
	high := int64(binary.BigEndian.Uint64(h[24:32]))
	if sig != SigFigs || low != Lowest || high != Highest {
		return fmt.Errorf("%w: geometry %d..%d/%d digits, want %d..%d/%d", ErrBadEncoding,
			low, high, sig, Lowest, Highest, SigFigs)
	}
	return nil
}

// parsePayload reads HdrHistogram's zig-zag LEB128 counts into s: a
// positive value is the count at the next index, a negative one a run of
// empty buckets. It is the coordinator's inner loop (one payload per worker
// per interval): every value takes at least one byte, so s.buckets is
// sized once to len(p) and written by index, and the common one-byte value
// (a count below 64 or a run below 65) is decoded inline.
func parsePayload(s *Sparse, p []byte) error {
	if cap(s.buckets) < len(p) {
		s.buckets = make([]bucket, len(p))
	}
	out := s.buckets[:len(p)]
	n, idx, total := 0, int64(0), s.total
	for i := 0; i < len(p); {
		var v int64
		if b := p[i]; b < 0x80 {
			v = int64(b>>1) ^ -int64(b&1)
			i++
		} else {
			u, w, err := uvarint9(p[i:])
			if err != nil {
				return err
			}
			v = int64(u>>1) ^ -int64(u&1)
			i += w
		}
		switch {
		case v < 0:
			if v == math.MinInt64 || -v > int64(countsLen)-idx {
				return fmt.Errorf("zero run of %d at index %d past %d buckets", -v, idx, countsLen)
			}
			idx -= v
			continue
		case idx >= int64(countsLen):
			return fmt.Errorf("count at index %d past %d buckets", idx, countsLen)
		case v > math.MaxInt64-total:
			return errors.New("counts sum past MaxInt64")
		case v > 0:
			out[n] = bucket{idx: idx, cnt: v}
			n++
			total += v
		}
		idx++
	}
	s.buckets, s.total = out[:n], total
	return nil
}

// uvarint9 reads one value in HdrHistogram's LEB128 variant: up to 8 bytes
// of 7 bits, and a 9th byte of 8.
func uvarint9(b []byte) (uint64, int, error) {
	var u uint64
	for i := range 8 {
		if i >= len(b) {
			return 0, 0, fmt.Errorf("varint truncated after %d bytes", i)
		}
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return u, i + 1, nil
		}
	}
	if len(b) < 9 {
		return 0, 0, fmt.Errorf("varint truncated after %d bytes", len(b))
	}
	return u | uint64(b[8])<<56, 9, nil
}

// Accumulator sums Sparse histograms into one dense counts array. It is
// not safe for concurrent use.
type Accumulator struct {
	h Histogram
}

// NewAccumulator returns an empty Accumulator of the shared geometry.
func NewAccumulator() *Accumulator {
	return &Accumulator{h: *New()}
}

// Add adds every value of s; a sum past MaxInt64 is an error and leaves a
// unchanged.
func (a *Accumulator) Add(s *Sparse) error {
	if _, ok := addSat(a.h.total, s.total); !ok {
		return fmt.Errorf("%w: total count past MaxInt64", ErrMergeDropped)
	}
	for _, b := range s.buckets {
		a.h.add(int(b.idx), b.cnt) // idx < countsLen: checked by parsePayload
	}
	return nil
}

// Count is the number of values added.
func (a *Accumulator) Count() int64 { return a.h.total }

// Reset empties a, keeping its memory.
func (a *Accumulator) Reset() { a.h.Reset() }

// Histogram returns the accumulated values as a Histogram that shares a's
// memory: later Adds and Resets change it (Clone it to keep it).
func (a *Accumulator) Histogram() *Histogram { return &a.h }
