package crash

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/powerloss"
)

const testPS = 16 << 10

// fcrcFlags are the FSP_SPACE_FLAGS of a 16 KiB full_crc32 tablespace.
const fcrcFlags = 1<<4 | 5

// fcrcPage builds an intact full_crc32 page of (space, page) at lsn whose
// body is fill; page 0 carries the tablespace flags.
func fcrcPage(space, page uint32, lsn uint64, fill byte) []byte {
	p := bytes.Repeat([]byte{fill}, testPS)
	be := binary.BigEndian
	be.PutUint32(p, 0) // key version: not encrypted
	be.PutUint32(p[filPageOffset:], page)
	be.PutUint64(p[filPageLSN:], lsn)
	be.PutUint32(p[filPageSpaceID:], space)
	if page == 0 {
		be.PutUint32(p[fspSpaceFlags:], fcrcFlags)
	}
	be.PutUint32(p[testPS-8:], uint32(lsn))
	be.PutUint32(p[testPS-4:], crc32.Checksum(p[:testPS-4], castagnoli))
	return p
}

// legacyPage builds an intact page of the older format (crc32 algorithm).
func legacyPage(page uint32, lsn uint64) []byte {
	p := bytes.Repeat([]byte{7}, testPS)
	be := binary.BigEndian
	be.PutUint32(p[filPageOffset:], page)
	be.PutUint64(p[filPageLSN:], lsn)
	be.PutUint32(p[testPS-4:], uint32(lsn))
	sum := crc32.Checksum(p[4:26], castagnoli) ^ crc32.Checksum(p[38:testPS-8], castagnoli)
	be.PutUint32(p, sum)
	be.PutUint32(p[testPS-8:], sum)
	return p
}

// tear returns the first kept bytes of newP over oldP.
func tear(oldP, newP []byte, kept int) []byte {
	return append(append([]byte(nil), newP[:kept]...), oldP[kept:]...)
}

func TestPageState(t *testing.T) {
	fc, legacy := spaceFormat{pageSize: testPS, fullCRC32: true}, spaceFormat{pageSize: testPS}
	oldP, newP := fcrcPage(7, 3, 100, 'o'), fcrcPage(7, 3, 200, 'n')
	flipped := append([]byte(nil), newP...)
	flipped[9000] ^= 1
	lsnOff := append([]byte(nil), newP...)
	binary.BigEndian.PutUint32(lsnOff[testPS-8:], 1)
	binary.BigEndian.PutUint32(lsnOff[testPS-4:], crc32.Checksum(lsnOff[:testPS-4], castagnoli))
	tests := []struct {
		name string
		f    spaceFormat
		p    []byte
		want string
	}{
		{"full_crc32 intact", fc, newP, pageValid},
		{"full_crc32 one bit flipped", fc, flipped, pageCorrupt},
		{"full_crc32 end LSN differs", fc, lsnOff, pageCorrupt},
		{"torn at 4 KiB", fc, tear(oldP, newP, 4096), pageCorrupt},
		{"torn at 12 KiB", fc, tear(oldP, newP, 12288), pageCorrupt},
		{"never written", fc, make([]byte, testPS), pageZero},
		{"crc32 intact", legacy, legacyPage(3, 9), pageValid},
		{"crc32 torn", legacy, tear(legacyPage(3, 9), legacyPage(3, 10), 8192), pageCorrupt},
	}
	for _, tt := range tests {
		if got := tt.f.pageState(tt.p); got != tt.want {
			t.Errorf("%s: %s; want %s", tt.name, got, tt.want)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for flags, want := range map[uint32]spaceFormat{
		fcrcFlags:   {pageSize: 16 << 10, fullCRC32: true},
		1<<4 | 3:    {pageSize: 4 << 10, fullCRC32: true},
		0:           {pageSize: 16 << 10},
		0x21:        {pageSize: 16 << 10}, // post-antelope, atomic blobs
		4 << 6:      {pageSize: 8 << 10},
		1<<4 | 0xf:  {},
		0xf<<6 | 1:  {},
		1<<4 | 1<<3: {},
	} {
		got, err := formatOf(flags)
		if got != want || (err != nil) != (want.pageSize == 0) {
			t.Errorf("formatOf(%#x) = %+v, %v; want %+v", flags, got, err, want)
		}
	}
}

// redoHeader is the start of an ib_logfile0 with the given checkpoints
// (lsn, end); a zero lsn leaves that block invalid.
func redoHeader(cps ...[2]uint64) []byte {
	b := make([]byte, 12288)
	be := binary.BigEndian
	be.PutUint32(b, redoFormat108)
	for i, cp := range cps {
		if cp[0] == 0 {
			continue
		}
		c := b[redoCheckpoint1*(i+1):]
		be.PutUint64(c, cp[0])
		be.PutUint64(c[8:], cp[1])
		be.PutUint32(c[60:], crc32.Checksum(c[:60], castagnoli))
	}
	return b
}

func TestRedoCheckpoint(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		b    []byte
		want uint64 // 0: an error
	}{
		{"both valid, the later wins", redoHeader([2]uint64{5000, 6000}, [2]uint64{4000, 4100}), 5000},
		{"only the second valid", redoHeader([2]uint64{0, 0}, [2]uint64{4000, 4100}), 4000},
		{"none valid", redoHeader(), 0},
		{"end before checkpoint", redoHeader([2]uint64{5000, 10}), 0},
		{"older format", append([]byte{0, 0, 0, 1}, make([]byte, 12284)...), 0},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, "ib_logfile0")
		must(t, os.WriteFile(p, tt.b, 0o644))
		got, err := redoCheckpoint(p)
		if got != tt.want || (err != nil) != (tt.want == 0) {
			t.Errorf("%s: %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writePages writes pages (page number -> content) into a new file.
func writePages(t *testing.T, path string, pages map[uint32][]byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	for n, p := range pages {
		_, err := f.WriteAt(p, int64(n)*testPS)
		must(t, err)
	}
}

// tornDatadir lays out what a torn cut leaves: ibdata1 with a doublewrite
// buffer holding copies of pages 0 (newer than the checkpoint) and 3
// (older) of space 7, sbtest/t1.ibd with pages 0 and 3 torn, and a redo
// log whose checkpoint is at LSN 4000.
func tornDatadir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	trx := make([]byte, testPS)
	h := trx[testPS-trxSysDblwr:]
	binary.BigEndian.PutUint32(h[dblwrMagicOff:], dblwrMagicN)
	binary.BigEndian.PutUint32(h[dblwrBlock1Off:], 64)
	binary.BigEndian.PutUint32(h[dblwrBlock2Off:], 128)
	writePages(t, filepath.Join(dir, "ibdata1"), map[uint32][]byte{
		0: fcrcPage(0, 0, 10, 's'), trxSysPage: trx,
		64: fcrcPage(7, 0, 5000, 'n'), 65: fcrcPage(7, 3, 100, 'n'), 191: fcrcPage(0, 300, 5000, 'x')})
	writePages(t, filepath.Join(dir, "sbtest", "t1.ibd"), map[uint32][]byte{
		0: tear(fcrcPage(7, 0, 3000, 'o'), fcrcPage(7, 0, 5000, 'n'), 8192),
		3: tear(fcrcPage(7, 3, 50, 'o'), fcrcPage(7, 3, 100, 'n'), 4096),
		5: fcrcPage(7, 5, 60, 'o')})
	must(t, os.WriteFile(filepath.Join(dir, "ib_logfile0"), redoHeader([2]uint64{4000, 4500}), 0o644))
	return dir
}

func TestInspectTorn(t *testing.T) {
	dir := tornDatadir(t)
	c := &PowerCut{Torn: true, Files: []powerloss.FileCut{
		{Path: "data/sbtest/t1.ibd", Lost: []powerloss.LostWrite{
			{Seq: 0, Offset: 0, Length: testPS, Kept: 8192, Torn: true},
			{Seq: 1, Offset: 3 * testPS, Length: testPS, Kept: 4096, Torn: true},
			{Seq: 2, Offset: 5 * testPS, Length: testPS},                      // dropped whole: page 5 is old, not torn
			{Seq: 3, Offset: 0, Length: 2 * testPS, Kept: testPS, Torn: true}, // torn at a page boundary: no torn page
			{Seq: 4, Offset: 0, Length: testPS, Kept: 8192, Torn: true},       // page 0 again: one page
		}},
		{Path: "data/ibdata1", Lost: []powerloss.LostWrite{
			{Seq: 0, Offset: 64 * testPS, Length: 128 * testPS, Kept: 4096, Torn: true}, // the doublewrite batch itself
		}},
		{Path: "data/ib_logfile0", Lost: []powerloss.LostWrite{{Offset: 12288, Length: 512, Kept: 0}}},
	}}
	c.inspectTorn(innodbFilesOf(dir, nil, powerLayout{mounts: []mountDir{{role: "data", backing: dir}}}))
	path := filepath.Join(dir, "sbtest", "t1.ibd")
	want := []TornPage{
		{File: "data/sbtest/t1.ibd", Path: path, Page: 0, SpaceID: 7, Kept: 8192, OnDisk: pageCorrupt, Copy: true, CopyLSN: 5000, CopyUsable: true},
		{File: "data/sbtest/t1.ibd", Path: path, Page: 3, SpaceID: 7, Kept: 4096, OnDisk: pageCorrupt, Copy: true, CopyLSN: 100},
	}
	if c.InspectError != "" || c.CheckpointLSN != 4000 || len(c.TornPages) != len(want) {
		t.Fatalf("inspect: error %q, checkpoint %d, torn pages %+v; want none, 4000, %+v", c.InspectError, c.CheckpointLSN, c.TornPages, want)
	}
	for i := range want {
		if c.TornPages[i] != want[i] {
			t.Errorf("torn page %d = %+v; want %+v", i, c.TornPages[i], want[i])
		}
	}
	if s := c.String(); !strings.Contains(s, "2 torn page(s), 1 with a usable doublewrite copy") {
		t.Errorf("cut line %q does not count the torn pages", s)
	}
	if s := c.TornPages[0].String(); !strings.Contains(s, "page 0 (space 7)") || !strings.Contains(s, "usable copy (LSN 5000)") {
		t.Errorf("torn page line %q", s)
	}
}

func TestTrimLost(t *testing.T) {
	var lost []powerloss.LostWrite
	for i := range 100 {
		lost = append(lost, powerloss.LostWrite{Seq: i, Torn: i%10 == 9})
	}
	c := &PowerCut{Files: []powerloss.FileCut{{Path: "data/ib_logfile0", Lost: lost, LostOmitted: 5}, {Path: "data/x.ibd", Lost: lost[:3]}}}
	c.trimLost()
	got := c.Files[0]
	torn := 0
	for i, w := range got.Lost {
		if w.Torn {
			torn++
		}
		if i > 0 && got.Lost[i-1].Seq >= w.Seq {
			t.Fatalf("out of write order: %+v", got.Lost)
		}
	}
	if len(got.Lost) != maxLostKept || torn != 10 || got.LostOmitted != 5+100-maxLostKept || len(c.Files[1].Lost) != 3 {
		t.Errorf("trimmed to %d (%d torn), omitted %d, short list %d; want %d with all 10 torn, %d omitted, 3 untouched",
			len(got.Lost), torn, got.LostOmitted, len(c.Files[1].Lost), maxLostKept, 5+100-maxLostKept)
	}
}

func TestInspectTornReportsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	c := &PowerCut{Torn: true, Files: []powerloss.FileCut{{Path: "data/sbtest/t1.ibd",
		Lost: []powerloss.LostWrite{{Offset: 0, Length: testPS, Kept: 4096, Torn: true}}}}}
	c.inspectTorn(innodbFilesOf(dir, nil, powerLayout{mounts: []mountDir{{role: "data", backing: dir}}}))
	if !strings.Contains(c.InspectError, "ibdata1") || len(c.TornPages) != 0 {
		t.Errorf("inspect without files: error %q, pages %+v; want an error naming ibdata1", c.InspectError, c.TornPages)
	}
}

func TestInnodbFilesOf(t *testing.T) {
	l := powerLayout{mounts: []mountDir{{role: "data", backing: "/d"}}}
	for _, tt := range []struct {
		settings     []string
		ibdata, redo string
	}{
		{nil, "/d/ibdata1", "/d/ib_logfile0"},
		{[]string{"innodb_data_file_path=ibdata7:12M;ibdata8:1G:autoextend", "innodb-log-group-home-dir=/r"}, "/d/ibdata7", "/r/ib_logfile0"},
		{[]string{"innodb_data_home_dir=sys", "innodb_log_group_home_dir=./redo"}, "/d/sys/ibdata1", "/d/redo/ib_logfile0"},
	} {
		var set []mysqld.Setting
		for _, s := range tt.settings {
			k, v, _ := strings.Cut(s, "=")
			set = append(set, mysqld.Setting{Key: k, Value: v})
		}
		f := innodbFilesOf("/d", set, l)
		if f.ibdata != tt.ibdata || f.redo != tt.redo || f.roots["data"] != "/d" {
			t.Errorf("settings %v: ibdata %s, redo %s; want %s, %s", tt.settings, f.ibdata, f.redo, tt.ibdata, tt.redo)
		}
	}
}
