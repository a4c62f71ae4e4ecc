package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MaxEncodedSize bounds an encoded histogram accepted by Decode. A full
// histogram of the shared geometry compresses to well under this; anything
// larger is hostile or corrupt.
const MaxEncodedSize = 256 << 10

// ErrBadEncoding is wrapped by every Decode failure.
var ErrBadEncoding = errors.New("bad encoded histogram")

// Encode returns h in HdrHistogram's compressed V2 encoding (base64 text), the
// format every HdrHistogram implementation reads. The overflow count does not
// travel: values above Highest are already recorded as Highest.
func (h *Histogram) Encode() ([]byte, error) {
	b, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	return b, nil
}

// Decode parses an encoded histogram after checking its size and that its
// header declares exactly the shared geometry, so a hostile payload can
// neither allocate a huge counts array nor merge inexactly.
func Decode(b []byte) (*Histogram, error) {
	if len(b) > MaxEncodedSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrBadEncoding, len(b), MaxEncodedSize)
	}
	if err := checkHeader(b); err != nil {
		return nil, err
	}
	h, err := hdr.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	return &Histogram{h: h}, nil
}

// checkHeader inflates only the 40-byte V2 header and compares its geometry.
func checkHeader(b []byte) error {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(raw, b)
	if err != nil {
		return fmt.Errorf("%w: base64: %v", ErrBadEncoding, err)
	}
	raw = raw[:n]
	if len(raw) < 8 {
		return fmt.Errorf("%w: %d bytes, too short", ErrBadEncoding, len(raw))
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return fmt.Errorf("%w: zlib: %v", ErrBadEncoding, err)
	}
	defer z.Close()
	var hdrBytes [40]byte
	if _, err := io.ReadFull(z, hdrBytes[:]); err != nil {
		return fmt.Errorf("%w: header: %v", ErrBadEncoding, err)
	}
	sig := int32(binary.BigEndian.Uint32(hdrBytes[12:16]))
	low := int64(binary.BigEndian.Uint64(hdrBytes[16:24]))
	high := int64(binary.BigEndian.Uint64(hdrBytes[24:32]))
	if sig != SigFigs || low != Lowest || high != Highest {
		return fmt.Errorf("%w: geometry %d..%d/%d digits, want %d..%d/%d", ErrBadEncoding,
			low, high, sig, Lowest, Highest, SigFigs)
	}
	return nil
}
