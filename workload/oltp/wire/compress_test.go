package wire

import (
	"bytes"
	"compress/zlib"
	"errors"
	"math/rand/v2"
	"testing"
)

// packet builds one ordinary packet: header with sequence seq, then payload.
func packet(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// deflated is payload zlib-compressed (the default level, as a server's).
func deflated(t testing.TB, payload []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	if _, err := w.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// frame builds a frame: seq, the payload as given, ulen in the header.
func frame(seq byte, payload []byte, ulen int) []byte {
	c := len(payload)
	return append([]byte{byte(c), byte(c >> 8), byte(c >> 16), seq, byte(ulen), byte(ulen >> 8), byte(ulen >> 16)}, payload...)
}

// TestFrame: what goes as is and what is deflated, as libmysqlclient's
// my_compress decides, and the frame's header.
func TestFrame(t *testing.T) {
	insert := packet(0, append([]byte{ComStmtExecute}, bytes.Repeat([]byte("68487932199-96439406143-"), 10)...))
	random := make([]byte, 200)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	for _, tt := range []struct {
		name     string
		packets  []byte
		deflated bool
	}{
		{"short: below MinCompressLength", packet(0, []byte{ComQuery, 'B', 'E', 'G', 'I', 'N'}), false},
		{"49 bytes: as is", packet(0, bytes.Repeat([]byte{'a'}, MinCompressLength-1-4)), false},
		{"50 bytes: deflated", packet(0, bytes.Repeat([]byte{'a'}, MinCompressLength-4)), true},
		{"an INSERT's execution", insert, true},
		{"incompressible: as is", packet(0, random), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			z := NewCompressor()
			f, err := z.Frame(tt.packets, 3)
			if err != nil {
				t.Fatal(err)
			}
			clen, seq, ulen := uint24(f), f[3], uint24(f[4:])
			if clen != len(f)-frameHeader || seq != 3 {
				t.Fatalf("header: length %d, seq %d; want %d, 3", clen, seq, len(f)-frameHeader)
			}
			if got := ulen != 0; got != tt.deflated {
				t.Fatalf("uncompressed length %d for %d bytes: deflated %v, want %v", ulen, len(tt.packets), got, tt.deflated)
			}
			if tt.deflated && (ulen != len(tt.packets) || clen >= ulen) {
				t.Fatalf("deflated %d bytes to %d, header says %d", len(tt.packets), clen, ulen)
			}
			// What a server does with it: zlib's own reader.
			payload := f[frameHeader:]
			if tt.deflated {
				zr, err := zlib.NewReader(bytes.NewReader(payload))
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if _, err := b.ReadFrom(zr); err != nil {
					t.Fatal(err)
				}
				payload = b.Bytes()
			}
			if !bytes.Equal(payload, tt.packets) {
				t.Fatalf("the frame carries %x; want %x", payload, tt.packets)
			}
		})
	}
}

// TestPacket reads packets out of frames as a server sends them: as is
// and deflated, several in a frame, one spanning two frames, a frame
// arriving a byte at a time.
func TestPacket(t *testing.T) {
	ok := packet(1, []byte{0, 1, 0, 2, 0, 0, 0})
	long := packet(2, append([]byte{0xff, 0x15, 0x04, '#', '2', '8', '0', '0', '0'}, bytes.Repeat([]byte("Access denied "), 8)...))
	both := append(append([]byte(nil), ok...), long...)
	var split []byte
	split = append(split, frame(1, both[:20], 0)...)
	split = append(split, frame(2, deflated(t, both[20:]), len(both)-20)...)
	for _, tt := range []struct {
		name   string
		stream []byte
	}{
		{"as is, one each", append(frame(1, ok, 0), frame(2, long, 0)...)},
		{"deflated, both in one", frame(1, deflated(t, both), len(both))},
		{"spanning two frames", split},
	} {
		for _, step := range []int{len(tt.stream), 1} {
			z := NewCompressor()
			var got [][]byte
			var buf []byte
			off := 0
			for fed := 0; len(got) < 2; {
				p, used, ok, err := z.Packet(buf[off:])
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				off += used
				if ok {
					got = append(got, append([]byte(nil), p...))
					continue
				}
				if fed == len(tt.stream) {
					t.Fatalf("%s (fed %d at a time): %d packets from the whole stream; want 2", tt.name, step, len(got))
				}
				n := min(step, len(tt.stream)-fed)
				buf = append(buf, tt.stream[fed:fed+n]...)
				fed += n
			}
			if off != len(tt.stream) || !bytes.Equal(got[0], ok[4:]) || !bytes.Equal(got[1], long[4:]) {
				t.Errorf("%s (fed %d at a time): took %d of %d bytes, packets %x, %x", tt.name, step, off, len(tt.stream), got[0], got[1])
			}
		}
	}
}

// TestNextFrameRejects: a server's bad frame is an error, never a panic
// or a buffer of the length it claims.
func TestNextFrameRejects(t *testing.T) {
	ok := packet(1, bytes.Repeat([]byte{0}, 60))
	d := deflated(t, ok)
	for _, tt := range []struct {
		name string
		buf  []byte
	}{
		{"payload past MaxFrame", []byte{0xff, 0xff, 0xff, 1, 0, 0, 0}},
		{"inflating past MaxFrame", frame(1, d, 1<<24-1)},
		{"not zlib", frame(1, []byte("not a zlib stream at all"), 100)},
		{"inflates shorter than stated", frame(1, d, len(ok)+1)},
		{"inflates longer than stated", frame(1, d, len(ok)-1)},
		{"bad checksum", frame(1, append(append([]byte(nil), d[:len(d)-1]...), d[len(d)-1]^1), len(ok))},
		{"truncated stream", frame(1, d[:len(d)-5], len(ok))},
	} {
		z := NewCompressor()
		if _, _, err := z.NextFrame(tt.buf); !errors.Is(err, ErrBadFrame) {
			t.Errorf("%s: err = %v; want ErrBadFrame", tt.name, err)
		}
	}
}

// TestCompressorAllocs: a statement's round trip through the framing,
// deflated both ways, allocates nothing once warm.
func TestCompressorAllocs(t *testing.T) {
	req := packet(0, append([]byte{ComStmtExecute}, bytes.Repeat([]byte("68487932199-96439406143-"), 10)...))
	answer := packet(1, append([]byte{0}, bytes.Repeat([]byte{1}, 80)...))
	in := frame(1, deflated(t, answer), len(answer))
	z := NewCompressor()
	roundTrip := func() {
		if _, err := z.Frame(req, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, err := z.Packet(in); !ok || err != nil {
			t.Fatalf("no packet: %v", err)
		}
	}
	roundTrip()
	if n := testing.AllocsPerRun(200, roundTrip); n != 0 {
		t.Errorf("%.1f allocations per round trip; want 0", n)
	}
}

// FuzzPacket feeds a server's bytes to the framing: no panic, no buffer
// past MaxFrame, and a request framed here reads back as sent.
func FuzzPacket(f *testing.F) {
	ok := packet(1, []byte{0, 1, 0, 2, 0, 0, 0})
	long := packet(1, bytes.Repeat([]byte("abc"), 40))
	f.Add(frame(1, ok, 0))
	f.Add(frame(1, deflated(f, long), len(long)))
	f.Add(frame(1, deflated(f, long), len(long)+3))
	f.Add([]byte{0xff, 0xff, 0xff, 1, 0, 0, 0})
	f.Add(frame(1, []byte{0x78, 0x9c, 0xff}, 50))
	f.Fuzz(func(t *testing.T, b []byte) {
		z := NewCompressor()
		for off := 0; off < len(b); {
			p, used, ok, err := z.Packet(b[off:])
			if err != nil || !ok && used == 0 {
				break
			}
			off += used
			if len(p) > MaxFrame || cap(z.plain) > MaxFrame || cap(z.pend) > 2*MaxFrame {
				t.Fatalf("buffers past MaxFrame: packet %d, plain %d, pending %d", len(p), cap(z.plain), cap(z.pend))
			}
		}
		if len(b) > MaxFrame-4 {
			return
		}
		// Whatever the bytes, framed as one packet they come back.
		req := packet(0, b)
		fr, err := z.Frame(req, 0)
		if err != nil {
			t.Fatal(err)
		}
		z2 := NewCompressor()
		var plain []byte
		if ulen := uint24(fr[4:]); ulen == 0 {
			plain = fr[frameHeader:]
		} else if plain, _, err = z2.NextFrame(fr); err != nil {
			t.Fatalf("reading back a frame made here: %v", err)
		}
		if !bytes.Equal(plain, req) {
			t.Fatalf("framed %x, read back %x", req, plain)
		}
	})
}
