package powerloss

import (
	"bytes"
	"os"
	"reflect"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tornOnce writes 8 pages of 16 KiB (one write each) over a durable zero
// file without fsync, cuts with torn writes and the given seed, and
// returns the durable content and the report.
func tornOnce(t *testing.T, seed int64) ([]byte, CutReport) {
	const page, pages = 16 << 10, 8
	e := mountEnv(t, map[string]string{"ibd": string(make([]byte, page*pages))})
	f := e.open("ibd", 0)
	for i := range pages {
		writeAt(t, f, string(bytes.Repeat([]byte{byte('a' + i)}, page)), int64(i*page))
	}
	rep := e.cut(CutOptions{Torn: true, Seed: seed})
	got, err := os.ReadFile(e.durable("ibd"))
	must(t, err)
	return got, rep
}

func TestTornWriteKeepsAlignedPrefix(t *testing.T) {
	const page = 16 << 10
	got, rep := tornOnce(t, 42)
	if rep.Seed != 42 || !rep.Torn {
		t.Errorf("report seed/torn = %d/%v; want 42/true", rep.Seed, rep.Torn)
	}
	var kept int64
	torn := 0
	for i := 0; i < len(got)/page; i++ {
		p := got[i*page : (i+1)*page]
		n := bytes.IndexByte(p, 0) // the page's kept prefix ends at its first zero
		if n < 0 {
			n = page
		}
		if n%4096 != 0 || !bytes.Equal(p[:n], bytes.Repeat([]byte{byte('a' + i)}, n)) || bytes.ContainsFunc(p[n:], func(r rune) bool { return r != 0 }) {
			t.Errorf("page %d: kept %d bytes; want a 4 KiB multiple of the new data, then old zeros", i, n)
		}
		kept += int64(n)
		if n > 0 && n < page {
			torn++
		}
	}
	if rep.TornWrites != torn || len(rep.Files) != 1 || rep.Files[0].TornWrites != torn {
		t.Errorf("report torn writes = %d (files %+v); pages show %d torn", rep.TornWrites, rep.Files, torn)
	}
	if kept != rep.KeptBytes || rep.DroppedBytes != 8*page-kept {
		t.Errorf("report kept/dropped = %d/%d; pages show %d kept", rep.KeptBytes, rep.DroppedBytes, kept)
	}
	// Every page not kept whole is listed with what of it was kept.
	var want []LostWrite
	for i := 0; i < len(got)/page; i++ {
		n := int64(bytes.IndexByte(got[i*page:(i+1)*page], 0))
		if n >= 0 {
			want = append(want, LostWrite{Seq: i, Offset: int64(i * page), Length: page, Kept: n, Torn: n > 0})
		}
	}
	if fc := rep.Files[0]; !reflect.DeepEqual(fc.Lost, want) || fc.LostOmitted != 0 || fc.Size != 8*page || fc.DurableSize != 8*page {
		t.Errorf("file cut = %+v; want lost writes %+v, size and durable size %d", fc, want, 8*page)
	}
	again, _ := tornOnce(t, 42)
	if !bytes.Equal(got, again) {
		t.Errorf("same writes, same seed 42: different outcome")
	}
	other, _ := tornOnce(t, 43)
	if bytes.Equal(got, other) {
		t.Errorf("seeds 42 and 43 tore the same way (possible but unlikely: 5^8 outcomes)")
	}
}

// TestCutReportsGrowth: writes past the durable size lose that part
// whatever the tear, and the report says which writes grew the file.
func TestCutReportsGrowth(t *testing.T) {
	const page = 16 << 10
	old := string(bytes.Repeat([]byte{'o'}, page))
	for _, torn := range []bool{false, true} {
		for seed := int64(1); seed <= 8; seed++ {
			e := mountEnv(t, map[string]string{"ibd": old})
			f := e.open("ibd", 0)
			writeAt(t, f, string(bytes.Repeat([]byte{'n'}, 2*page)), 0) // straddles the durable end
			writeAt(t, f, string(bytes.Repeat([]byte{'x'}, page)), 3*page)
			rep := e.cut(CutOptions{Torn: torn, Seed: seed})
			got, err := os.ReadFile(e.durable("ibd"))
			must(t, err)
			if len(rep.Files) != 1 || len(got) != page {
				t.Fatalf("torn %v seed %d: %d bytes durable, report %+v; want the durable size %d kept", torn, seed, len(got), rep, page)
			}
			fc := rep.Files[0]
			kept := int64(bytes.IndexByte(append(got, 'o'), 'o'))
			want := []LostWrite{
				{Seq: 0, Offset: 0, Length: 2 * page, Kept: kept, Extends: true},
				{Seq: 1, Offset: 3 * page, Length: page, Extends: true},
			}
			if fc.Size != 4*page || fc.DurableSize != page || fc.Writes != 2 || fc.TornWrites != 0 || !reflect.DeepEqual(fc.Lost, want) {
				t.Errorf("torn %v seed %d: file cut %+v; want size %d, durable %d, 2 writes, none torn, lost %+v", torn, seed, fc, 4*page, page, want)
			}
			if !torn && kept != 0 {
				t.Errorf("untorn cut kept %d bytes", kept)
			}
		}
	}
}

func TestLossLogBound(t *testing.T) {
	var l lossLog
	for i := range 3 * maxLostWrites {
		l.add(LostWrite{Seq: i, Torn: i%3 == 2}) // every third write torn
	}
	got, omitted := l.list()
	if len(got) != maxLostWrites || omitted != 2*maxLostWrites {
		t.Fatalf("kept %d, omitted %d; want %d and %d", len(got), omitted, maxLostWrites, 2*maxLostWrites)
	}
	torn := 0
	for i, w := range got {
		if w.Torn {
			torn++
		}
		if i > 0 && got[i-1].Seq >= w.Seq {
			t.Fatalf("lost writes out of write order at %d: %+v", i, got[i-1:i+1])
		}
	}
	if torn != maxLostWrites {
		t.Errorf("%d torn writes listed; want all %d of them before any dropped one", torn, maxLostWrites)
	}
}

// alignedBuf returns n bytes aligned for O_DIRECT.
func alignedBuf(n int) []byte {
	b := make([]byte, n+4096)
	off := (4096 - int(uintptr(unsafe.Pointer(&b[0]))%4096)) % 4096
	return b[off : off+n]
}

func TestODirect(t *testing.T) {
	e := mountEnv(t, map[string]string{"f": ""})
	f := e.open("f", unix.O_DIRECT)
	w := alignedBuf(8192)
	for i := range w {
		w[i] = byte(i % 251)
	}
	if _, err := f.WriteAt(w, 4096); err != nil {
		t.Fatalf("O_DIRECT write: %v", err)
	}
	r := alignedBuf(8192)
	if _, err := f.ReadAt(r, 4096); err != nil || !bytes.Equal(r, w) {
		t.Fatalf("O_DIRECT read back: err %v, equal %v", err, bytes.Equal(r, w))
	}
	if d := e.readDurable("f"); d != "" {
		t.Errorf("O_DIRECT write without fsync reached the backing file (%d bytes): the layer is a volatile cache", len(d))
	}
	must(t, f.Sync())
	e.cut(CutOptions{})
	if d := e.readDurable("f"); len(d) != 12288 || d[4096:] != string(w) {
		t.Errorf("after fsync and cut: %d bytes; want 12288 with the data at 4096", len(d))
	}
}

// TestSparseHighOffset writes 4 KiB at 64 GiB: only those bytes are cached
// and flushed, never the 64 GiB before them.
func TestSparseHighOffset(t *testing.T) {
	const off = 64 << 30
	e := mountEnv(t, map[string]string{"big": "head"})
	f := e.open("big", 0)
	writeAt(t, f, string(bytes.Repeat([]byte{7}, 4096)), off)
	if s := e.stats(); s.DirtyBytes != 4096 {
		t.Errorf("dirty bytes = %d; want 4096", s.DirtyBytes)
	}
	tailRead := make([]byte, 4100)
	if n, _ := f.ReadAt(tailRead, off-4); n != 4100 || tailRead[3] != 0 || tailRead[4] != 7 {
		t.Errorf("read across the hole edge: %d bytes %v", n, tailRead[:8])
	}
	must(t, f.Sync())
	e.cut(CutOptions{})
	var st unix.Stat_t
	must(t, unix.Stat(e.durable("big"), &st))
	if st.Size != off+4096 || st.Blocks*512 > 1<<20 {
		t.Errorf("durable file: size %d, %d bytes allocated; want size %d, sparse", st.Size, st.Blocks*512, off+4096)
	}
}
