package fio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// maxPattern is fio's MAX_PATTERN_SIZE: the most bytes a pattern holds.
const maxPattern = 512

// offsetFmtLen is the room %o takes in a pattern: the block's offset as
// 8 little-endian bytes (fio pastes io_u->offset in the host's order).
const offsetFmtLen = 8

// parsePattern reads fio's pattern syntax (verify_pattern=,
// buffer_pattern=), as fio's parse_and_fill_pattern: any run of
// "strings", 'files' (their first bytes), hex numbers (0x..., any length,
// an odd digit count padded on the left: 0xaaa is 0a aa), decimal numbers
// in int's range (little-endian, as few bytes as the value needs, 0 is
// one byte) and, where fmtOK, %o (8 bytes the block's offset is pasted
// into). It returns the bytes and where each %o starts.
func parsePattern(in string, fmtOK bool) ([]byte, []uint32, error) {
	var out []byte
	var offs []uint32
	s := in
	if s == "" {
		return nil, nil, fmt.Errorf("empty pattern")
	}
	for s != "" {
		var part []byte
		switch s[0] {
		case '"', '\'':
			q := s[0]
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return nil, nil, fmt.Errorf("pattern %q: unterminated %c", in, q)
			}
			body := s[1 : 1+end]
			s = s[2+end:]
			if q == '"' {
				part = []byte(body)
				break
			}
			b, err := os.ReadFile(body)
			if err != nil {
				return nil, nil, fmt.Errorf("pattern %q: %w", in, err)
			}
			part = b[:min(len(b), maxPattern-len(out))]
		case '%':
			if !fmtOK || !strings.HasPrefix(s, "%o") {
				return nil, nil, fmt.Errorf("pattern %q: unknown format at %q (only verify_pattern's %%o)", in, s)
			}
			offs = append(offs, uint32(len(out)))
			part = make([]byte, offsetFmtLen)
			s = s[2:]
		default:
			var err error
			part, s, err = patternNumber(s)
			if err != nil {
				return nil, nil, fmt.Errorf("pattern %q: %w", in, err)
			}
		}
		if len(out)+len(part) > maxPattern {
			return nil, nil, fmt.Errorf("pattern %q: longer than %d bytes", in, maxPattern)
		}
		out = append(out, part...)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("pattern %q: no bytes", in)
	}
	return out, offs, nil
}

// patternNumber reads one number at the start of s: hex after 0x (up to
// the next "0x", as fio reads 0xff0x14 as ff 14), else decimal up to
// the next "0x" or the first non-digit.
func patternNumber(s string) ([]byte, string, error) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]) {
		d := s[2:]
		n := 0
		for n < len(d) && isHex(d[n]) {
			n++
		}
		// a digit 0 followed by x starts the next number
		if n < len(d) && n > 1 && d[n-1] == '0' && (d[n] == 'x' || d[n] == 'X') {
			n--
		}
		digits, rest := d[:n], d[n:]
		if len(digits)%2 == 1 {
			digits = "0" + digits
		}
		out := make([]byte, len(digits)/2)
		for i := range out {
			v, _ := strconv.ParseUint(digits[2*i:2*i+2], 16, 8)
			out[i] = byte(v)
		}
		return out, rest, nil
	}
	lim := len(s)
	if i := strings.Index(strings.ToLower(s), "0x"); i > 0 {
		lim = i
	}
	n := 0
	if n < lim && (s[n] == '-' || s[n] == '+') {
		n++
	}
	for n < lim && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	v, err := strconv.ParseInt(s[:n], 10, 32)
	if err != nil {
		return nil, s, fmt.Errorf("want a \"string\", 'file', 0xhex, decimal number or %%o at %q", s)
	}
	if v == 0 {
		return []byte{0}, s[n:], nil
	}
	var out []byte
	for u := uint32(v); u != 0; u >>= 8 {
		out = append(out, byte(u))
	}
	return out, s[n:], nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// pattern is a parsed pattern ready to fill and check blocks without
// allocating: cur is the pattern with the current block's offset pasted.
type pattern struct {
	src  []byte
	offs []uint32
	cur  []byte
}

func newPattern(src []byte, offs []uint32) *pattern {
	if len(src) == 0 {
		return nil
	}
	return &pattern{src: src, offs: offs, cur: bytes.Clone(src)}
}

// at readies cur for a block at file offset off (fio pastes the I/O's
// offset into each %o).
func (p *pattern) at(off uint64) []byte {
	for _, o := range p.offs {
		var b [offsetFmtLen]byte
		binary.LittleEndian.PutUint64(b[:], off)
		copy(p.cur[o:], b[:])
	}
	return p.cur
}

// fill fills buf with the pattern for a block at off, over and over from
// buf's start, as fio's paste_format and dup_pattern.
func (p *pattern) fill(buf []byte, off uint64) {
	fillRepeat(buf, p.at(off))
}

// fillRepeat copies pat over buf again and again, doubling what is
// copied each time.
func fillRepeat(buf, pat []byte) {
	n := copy(buf, pat)
	for n < len(buf) {
		n += copy(buf[n:], buf[:n])
	}
}

// matches reports whether buf holds the pattern of a block at off
// starting at phase (buf[0] is the pattern's byte phase%len), as fio's
// cmp_pattern: the buffer repeats itself every len bytes, and its first
// len bytes are the pattern's.
func (p *pattern) matches(buf []byte, off uint64, phase int) bool {
	pat := p.at(off)
	l := len(pat)
	if len(buf) > l && !bytes.Equal(buf[:len(buf)-l], buf[l:]) {
		return false
	}
	phase %= l
	head := min(len(buf), l-phase)
	if !bytes.Equal(buf[:head], pat[phase:phase+head]) {
		return false
	}
	rest := buf[head:min(len(buf), l)]
	return bytes.Equal(rest, pat[:len(rest)])
}

// mismatch is the first byte of buf, from phase, that is not the
// pattern's, for the failure message: its index, what was read and what
// was wanted.
func (p *pattern) mismatch(buf []byte, off uint64, phase int) (int, byte, byte) {
	pat := p.at(off)
	for i, b := range buf {
		if w := pat[(phase+i)%len(pat)]; b != w {
			return i, b, w
		}
	}
	return -1, 0, 0
}
