package wire

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
)

// CapCompress (CLIENT_COMPRESS): after login every packet travels inside
// the compressed protocol's frames.
const CapCompress = 1 << 5

// The compressed protocol (what libmysqlclient's MYSQL_OPT_COMPRESS
// speaks): a frame is a 7-byte header, the payload's length (3 bytes),
// the frame's own sequence number, and the length the payload has
// inflated (3 bytes; 0 when it was sent as is), then the payload: one or
// more ordinary packets, header included, zlib-deflated or not.
const (
	frameHeader = 7
	// MinCompressLength is libmysqlclient's MIN_COMPRESS_LENGTH: shorter
	// packets go as they are, as do those deflate does not shrink.
	MinCompressLength = 50
	// MaxFrame bounds both lengths of a frame a server sends: the answers
	// read here (OK, ERR, prepare-OK and its definitions) are a few
	// hundred bytes, and a bad length must not make a 16 MiB buffer per
	// connection.
	MaxFrame = 1 << 20
)

// ErrBadFrame reports a compressed frame that cannot be what a server
// sends: too long, or a payload that does not inflate to its header's
// length.
var ErrBadFrame = errors.New("bad compressed frame")

// Compressor is one connection's compressed framing: its zlib writer and
// reader and their buffers, made once and reused, so that neither
// direction allocates per statement. Not safe for concurrent use.
type Compressor struct {
	zw    *zlib.Writer
	out   appender      // the frame being sent
	fr    io.ReadCloser // package flate's reader
	src   bytes.Reader  // the deflated payload fr reads
	plain []byte        // the inflated payload of the last frame
	more  [1]byte       // a read past it, here so it does not escape
	// pend[poff:] are packets taken out of frames, not yet consumed.
	pend []byte
	poff int
}

// appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) { a.b = append(a.b, p...); return len(p), nil }

// NewCompressor makes a connection's framing state. Deflate runs at
// zlib.BestSpeed: its reset between frames costs nothing, where the
// default level (libmysqlclient's) clears 640 KB of hash tables per frame;
// on statements of ~200 bytes the output is within a few bytes.
func NewCompressor() *Compressor {
	z := &Compressor{out: appender{b: make([]byte, 0, 512)}, plain: make([]byte, 0, 512), pend: make([]byte, 0, 512)}
	z.zw, _ = zlib.NewWriterLevel(&z.out, zlib.BestSpeed) // the level is valid
	return z
}

// Frame returns packets (whole ordinary packets, headers filled in) as
// one frame with sequence number seq, valid until the next call: as
// they are below MinCompressLength or when deflate does not shrink them,
// as libmysqlclient's my_compress decides.
func (z *Compressor) Frame(packets []byte, seq byte) ([]byte, error) {
	n := len(packets)
	if n > maxPayload {
		return nil, fmt.Errorf("request of %d bytes: longer than one compressed frame (%d)", n, maxPayload)
	}
	z.out.b = append(z.out.b[:0], 0, 0, 0, seq, 0, 0, 0)
	if n >= MinCompressLength {
		z.zw.Reset(&z.out)
		_, err := z.zw.Write(packets)
		if err == nil {
			err = z.zw.Close()
		}
		if c := len(z.out.b) - frameHeader; err == nil && c < n {
			putUint24(z.out.b, c)
			putUint24(z.out.b[4:], n)
			return z.out.b, nil
		}
		z.out.b = z.out.b[:frameHeader]
	}
	putUint24(z.out.b, n)
	return append(z.out.b, packets...), nil
}

// NextFrame splits the first whole frame off buf and returns the packets
// it carries (valid until the next call) and the bytes it took. n is 0
// when buf does not hold a whole frame yet; a frame longer than MaxFrame,
// or one whose payload does not inflate to exactly its stated length, is
// an error (ErrBadFrame).
func (z *Compressor) NextFrame(buf []byte) (packets []byte, n int, err error) {
	if len(buf) < frameHeader {
		return nil, 0, nil
	}
	clen, ulen := uint24(buf), uint24(buf[4:])
	if clen > MaxFrame || ulen > MaxFrame {
		return nil, 0, fmt.Errorf("%w: %d bytes, inflating to %d (at most %d)", ErrBadFrame, clen, ulen, MaxFrame)
	}
	if len(buf) < frameHeader+clen {
		return nil, 0, nil
	}
	payload := buf[frameHeader : frameHeader+clen]
	if ulen == 0 {
		return payload, frameHeader + clen, nil
	}
	if err := z.inflate(payload, ulen); err != nil {
		return nil, 0, err
	}
	return z.plain, frameHeader + clen, nil
}

// inflate inflates payload, a zlib stream, into z.plain, which must come
// to ulen bytes. zlib's own reader makes a new checksum state per stream
// (an allocation a statement); its 2-byte header and 4-byte trailer are
// read here instead, around package flate's reader, which resets in place.
func (z *Compressor) inflate(payload []byte, ulen int) error {
	if len(payload) < 2+4 {
		return fmt.Errorf("%w: a zlib stream of %d bytes", ErrBadFrame, len(payload))
	}
	cmf, flg := payload[0], payload[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint16(cmf)<<8|uint16(flg))%31 != 0 || flg&0x20 != 0 {
		return fmt.Errorf("%w: zlib header %02x%02x", ErrBadFrame, cmf, flg)
	}
	z.src.Reset(payload[2:])
	if z.fr == nil {
		z.fr = flate.NewReader(&z.src) // made on the first deflated frame: a server may never send one
	} else if err := z.fr.(flate.Resetter).Reset(&z.src, nil); err != nil {
		return fmt.Errorf("%w: %v", ErrBadFrame, err)
	}
	if cap(z.plain) < ulen {
		z.plain = make([]byte, ulen)
	}
	z.plain = z.plain[:ulen]
	if _, err := io.ReadFull(z.fr, z.plain); err != nil {
		return fmt.Errorf("%w: inflating to %d bytes: %v", ErrBadFrame, ulen, err)
	}
	// The stream must end here, its checksum all that is left.
	if m, err := z.fr.Read(z.more[:]); m != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("longer than stated")
		}
		return fmt.Errorf("%w: inflating to %d bytes: %v", ErrBadFrame, ulen, err)
	}
	var sum [4]byte
	if n, _ := z.src.Read(sum[:]); n != 4 || z.src.Len() != 0 {
		return fmt.Errorf("%w: %d bytes after the deflated data; want its 4-byte checksum", ErrBadFrame, n+z.src.Len())
	}
	if binary.BigEndian.Uint32(sum[:]) != adler32.Checksum(z.plain) {
		return fmt.Errorf("%w: checksum mismatch", ErrBadFrame)
	}
	return nil
}

// Packet returns the next whole packet the frames in buf carry, taking
// frames off buf as needed (used is how many bytes it took, also when no
// packet is whole yet: ok false). The payload is valid until the next
// call. Packets may span frames, and a frame hold several.
func (z *Compressor) Packet(buf []byte) (payload []byte, used int, ok bool, err error) {
	for {
		p, size, err := Next(z.pend[z.poff:])
		if err != nil {
			return nil, used, false, err
		}
		if size > 0 {
			z.poff += size
			return p, used, true, nil
		}
		f, n, err := z.NextFrame(buf[used:])
		if err != nil || n == 0 {
			return nil, used, false, err
		}
		used += n
		if z.poff > 0 {
			z.pend = z.pend[:copy(z.pend, z.pend[z.poff:])]
			z.poff = 0
		}
		if len(z.pend)+len(f) > MaxFrame {
			return nil, used, false, fmt.Errorf("%w: a packet longer than %d bytes", ErrBadFrame, MaxFrame)
		}
		z.pend = append(z.pend, f...)
	}
}

// Reset drops packets not yet consumed: for a new connection.
func (z *Compressor) Reset() { z.pend, z.poff = z.pend[:0], 0 }

func uint24(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }

func putUint24(b []byte, n int) { b[0], b[1], b[2] = byte(n), byte(n>>8), byte(n>>16) }
