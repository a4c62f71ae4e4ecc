package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// MaxEncodedSize bounds an encoded histogram accepted by Decode. A full
// histogram of the shared geometry compresses to well under this; anything
// larger is hostile or corrupt.
const MaxEncodedSize = 256 << 10

// ErrBadEncoding is wrapped by every Decode failure.
var ErrBadEncoding = errors.New("bad encoded histogram")

// The V2 cookies as HdrHistogram writes them (the base | 0x10).
const (
	v2CookieOut           = v2Cookie | 0x10
	v2CompressedCookieOut = v2CompressedCookie | 0x10
)

// encoder is Encode's reusable state: the payload, the compressor and the
// compressed bytes. A zlib writer is ~1 MB; making one per Encode (as
// hdrhistogram-go does) was most of what a worker and the coordinator
// allocated per interval. BestSpeed, where hdrhistogram-go uses
// BestCompression: 7 times less CPU for 6% more bytes (a latency
// histogram's payload is a few KB of small varints).
type encoder struct {
	payload []byte
	comp    bytes.Buffer
	z       *zlib.Writer
}

// encoders keeps idle encoders: a cache, not state (any encoder gives the
// same bytes). Not a sync.Pool, which empties at every garbage collection:
// each collection then cost a new 1 MB writer, garbage that brought the
// next collection closer, and a collection stops the oltp clients (their
// raw reads) until the slowest answer.
var encoders struct {
	sync.Mutex
	free []*encoder
}

// maxIdleEncoders bounds the cache: encodes that run at once (a worker's
// interval, the coordinator's merge, a report).
const maxIdleEncoders = 4

func getEncoder() *encoder {
	encoders.Lock()
	defer encoders.Unlock()
	if n := len(encoders.free); n > 0 {
		e := encoders.free[n-1]
		encoders.free = encoders.free[:n-1]
		return e
	}
	e := &encoder{}
	// Cannot fail: the level is valid.
	e.z, _ = zlib.NewWriterLevel(&e.comp, zlib.BestSpeed)
	return e
}

func putEncoder(e *encoder) {
	encoders.Lock()
	defer encoders.Unlock()
	if len(encoders.free) < maxIdleEncoders {
		encoders.free = append(encoders.free, e)
	}
}

// Encode returns h in HdrHistogram's compressed V2 encoding (base64 text), the
// format every HdrHistogram implementation reads (the uncompressed payload is
// byte for byte what hdrhistogram-go writes). The overflow count does not travel: values above
// Highest are already recorded as Highest. It allocates only the result.
func (h *Histogram) Encode() ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	e.payload = h.appendV2(e.payload[:0])
	e.comp.Reset()
	e.z.Reset(&e.comp)
	if _, err := e.z.Write(e.payload); err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	if err := e.z.Close(); err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], v2CompressedCookieOut)
	binary.BigEndian.PutUint32(head[4:], uint32(e.comp.Len()))
	n := 8 + e.comp.Len()
	out := make([]byte, base64.StdEncoding.EncodedLen(n))
	// base64 of head+comp without joining them: head is 8 bytes, not a
	// multiple of 3, so encode the joined bytes from one buffer.
	raw := append(e.payload[:0], head[:]...)
	raw = append(raw, e.comp.Bytes()...)
	base64.StdEncoding.Encode(out, raw)
	e.payload = raw
	return out, nil
}

// appendV2 appends the uncompressed V2 encoding: the 40-byte header, then
// the counts up to the highest populated index as zig-zag LEB128 values, a
// run of empty buckets as one negative value.
func (h *Histogram) appendV2(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, v2CookieOut)
	lenAt := len(b)
	b = binary.BigEndian.AppendUint32(b, 0) // payload length, below
	b = binary.BigEndian.AppendUint32(b, 0) // normalizing index offset
	b = binary.BigEndian.AppendUint32(b, SigFigs)
	b = binary.BigEndian.AppendUint64(b, uint64(Lowest))
	b = binary.BigEndian.AppendUint64(b, uint64(Highest))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(1)) // integer-to-double ratio
	start := len(b)
	limit := indexOf(h.Max()) + 1 // 1 for an empty histogram: counts[0]
	for i := 0; i < limit; {
		c := h.counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && h.counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				b = appendZigZag(b, -zeros)
				continue
			}
		}
		b = appendZigZag(b, c)
	}
	binary.BigEndian.PutUint32(b[lenAt:], uint32(len(b)-start))
	return b
}

// appendZigZag appends v zig-zag encoded in HdrHistogram's LEB128 variant:
// 7 bits a byte for up to 8 bytes, then a 9th byte of 8 bits.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}

// decoders serve Decode (a cache: the inflater is reused).
var decoders = sync.Pool{New: func() any { return &Decoder{} }}

// Decode parses an encoded histogram (HDR's compressed V2 encoding or the
// sparse wire encoding) after checking its size and that its header
// declares exactly the shared geometry, so a hostile payload can neither
// allocate a huge counts array nor merge inexactly.
func Decode(b []byte) (*Histogram, error) {
	d := decoders.Get().(*Decoder)
	defer func() { d.Reset(); decoders.Put(d) }()
	s, err := d.DecodeSparse(b)
	if err != nil {
		return nil, err
	}
	h := New()
	for _, bk := range s.buckets {
		h.add(int(bk.idx), bk.cnt) // the sum fits: DecodeSparse checked it
	}
	return h, nil
}
