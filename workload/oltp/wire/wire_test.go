package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func TestExecuteEncoding(t *testing.T) {
	tests := []struct {
		name string
		id   uint32
		args []Value
		want string // hex of the whole packet
	}{
		{"no args", 7, nil,
			"0a000000" + "17" + "07000000" + "00" + "01000000"},
		{"int", 1, []Value{{Int: 42}},
			"16000000" + "17" + "01000000" + "00" + "01000000" + "00" + "01" + "0800" + "2a00000000000000"},
		{"int and bytes", 2, []Value{{Bytes: []byte("1-2")}, {Int: -1}},
			"1c000000" + "17" + "02000000" + "00" + "01000000" + "00" + "01" + "fe00" + "0800" + "03312d32" + "ffffffffffffffff"},
		{"empty bytes are a string", 3, []Value{{Bytes: []byte{}}},
			"0f000000" + "17" + "03000000" + "00" + "01000000" + "00" + "01" + "fe00" + "00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Finish(AppendExecute(Header(nil, ComStmtExecute), tt.id, tt.args, true))
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != tt.want {
				t.Errorf("packet\n got %s\nwant %s", h, tt.want)
			}
		})
	}
}

func TestExecuteWithoutTypes(t *testing.T) {
	got := hex.EncodeToString(AppendExecute(nil, 2, []Value{{Bytes: []byte("1")}, {Int: 1}}, false))
	want := "02000000" + "00" + "01000000" + "00" + "00" + "0131" + "0100000000000000"
	if got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestNullBitmapGrowsPerEightArgs(t *testing.T) {
	args := make([]Value, 9)
	b := AppendExecute(nil, 1, args, true)
	// id 4, flags 1, iterations 4, bitmap 2, bound 1, types 18, values 72
	if want := 4 + 1 + 4 + 2 + 1 + 18 + 72; len(b) != want {
		t.Errorf("9 args: %d bytes; want %d", len(b), want)
	}
}

func TestLenEncRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 1, 250, 251, 1<<16 - 1, 1 << 16, 1<<24 - 1, 1 << 24, 1<<64 - 1} {
		b := AppendLenEnc(nil, n)
		got, size, ok := lenEnc(b)
		if !ok || got != n || size != len(b) {
			t.Errorf("lenEnc(AppendLenEnc(%d)) = %d, %d, %v; want %d, %d, true", n, got, size, ok, n, len(b))
		}
		if _, _, ok := lenEnc(b[:len(b)-1]); ok && len(b) > 1 {
			t.Errorf("truncated length-encoded %d accepted", n)
		}
	}
}

func TestNextSplitsPackets(t *testing.T) {
	buf := []byte{2, 0, 0, 1, 0xaa, 0xbb, 1, 0, 0, 2, 0xcc, 3, 0}
	p, n, err := Next(buf)
	if err != nil || n != 6 || !bytes.Equal(p, []byte{0xaa, 0xbb}) {
		t.Fatalf("first = %x, %d, %v", p, n, err)
	}
	p, n, err = Next(buf[n:])
	if err != nil || n != 5 || !bytes.Equal(p, []byte{0xcc}) {
		t.Fatalf("second = %x, %d, %v", p, n, err)
	}
	if _, n, err := Next(buf[11:]); n != 0 || err != nil {
		t.Errorf("partial header: n %d, err %v; want 0, nil", n, err)
	}
	if _, n, err := Next([]byte{5, 0, 0, 0, 1}); n != 0 || err != nil {
		t.Errorf("partial payload: n %d, err %v; want 0, nil", n, err)
	}
	if _, _, err := Next([]byte{0xff, 0xff, 0xff, 0}); err != ErrMultiPacket {
		t.Errorf("16 MiB packet: err %v; want ErrMultiPacket", err)
	}
}

func TestParseAnswers(t *testing.T) {
	// OK: 0 marker, affected 3, insert id 0, status 2, warnings 0
	if n, err := ParseOK([]byte{0, 3, 0, 2, 0, 0, 0}); err != nil || n != 3 {
		t.Errorf("ParseOK = %d, %v; want 3", n, err)
	}
	if n, err := ParseOK([]byte{0, 0xfc, 0x10, 0x27, 0, 2, 0, 0, 0}); err != nil || n != 10000 {
		t.Errorf("ParseOK two-byte count = %d, %v; want 10000", n, err)
	}
	for _, bad := range [][]byte{nil, {0xff, 1, 2}, {0}, {0, 0xfc, 1}, {0xfe}} {
		if _, err := ParseOK(bad); err == nil {
			t.Errorf("ParseOK(%x) accepted", bad)
		}
	}
	e := ParseErr(append([]byte{0xff, 0xbd, 0x04, '#', '4', '0', '0', '0', '1'}, "Deadlock found"...))
	if e.Number != 1213 || string(e.SQLState[:]) != "40001" || e.Message != "Deadlock found" {
		t.Errorf("ParseErr = %d %s %q", e.Number, e.SQLState, e.Message)
	}
	if e := ParseErr([]byte{0xff, 0x1d, 0x04, 'b', 'y', 'e'}); e.Number != 1053 || e.Message != "bye" {
		t.Errorf("ParseErr without SQL state = %d %q", e.Number, e.Message)
	}
	ok, err := ParsePrepareOK([]byte{0, 9, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0})
	if err != nil || ok.ID != 9 || ok.Params != 4 || ok.Columns != 0 {
		t.Fatalf("ParsePrepareOK = %+v, %v", ok, err)
	}
	if got := ok.Trailing(0); got != 5 {
		t.Errorf("Trailing without DEPRECATE_EOF = %d; want 4 params + EOF", got)
	}
	if got := ok.Trailing(CapDeprecateEOF); got != 4 {
		t.Errorf("Trailing with DEPRECATE_EOF = %d; want 4", got)
	}
}

func TestFinishRefusesOversizedRequests(t *testing.T) {
	b := make([]byte, 4+maxPayload+1)
	if _, err := Finish(b); err == nil {
		t.Error("Finish accepted a payload longer than one packet")
	}
}

// FuzzAnswers feeds arbitrary server bytes to the readers: they must
// never panic, and Next must never claim more than it was given.
func FuzzAnswers(f *testing.F) {
	f.Add([]byte{7, 0, 0, 1, 0, 3, 0, 2, 0, 0, 0})
	f.Add([]byte{9, 0, 0, 1, 0xff, 0xbd, 0x04, '#', '4', '0', '0', '0', '1'})
	f.Add([]byte{12, 0, 0, 1, 0, 9, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			p, n, err := Next(b)
			if err != nil || n == 0 {
				return
			}
			if n > len(b) || len(p) != n-4 {
				t.Fatalf("Next took %d of %d bytes, payload %d", n, len(b), len(p))
			}
			_, _ = ParseOK(p)
			_ = ParseErr(p)
			if ok, err := ParsePrepareOK(p); err == nil {
				_ = ok.Trailing(0)
			}
			b = b[n:]
		}
	})
}
