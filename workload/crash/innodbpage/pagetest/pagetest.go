// Package pagetest builds InnoDB files for tests of package innodbpage and
// of the crash harness above it: intact and torn pages of both checksum
// formats, a system tablespace with a doublewrite buffer, a redo log
// header. It writes the formats from their definitions (fil0fil.h,
// trx0sys.h, log0log.h) rather than through innodbpage, so the tests
// check the reader against an independent writer.
package pagetest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// PageSize is the pages' size: 16 KiB.
const PageSize = 16 << 10

// FullCRC32Flags are the FSP_SPACE_FLAGS of a 16 KiB full_crc32
// tablespace.
const FullCRC32Flags = 1<<4 | 5

const (
	filPageOffset   = 4
	filPageLSN      = 16
	filPageSpaceID  = 34
	fspSpaceFlags   = 38 + 16
	trxSysPage      = 5
	trxSysDblwr     = 200
	dblwrMagicN     = 536853855
	dblwrMagicOff   = 10
	dblwrBlock1Off  = 14
	dblwrBlock2Off  = 18
	redoFormat108   = 0x50687973
	redoCheckpoint1 = 4096
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FullCRC32Page builds an intact full_crc32 page of (space, page) at lsn
// whose body is fill; page 0 carries the tablespace flags.
func FullCRC32Page(space, page uint32, lsn uint64, fill byte) []byte {
	p := bytes.Repeat([]byte{fill}, PageSize)
	be := binary.BigEndian
	be.PutUint32(p, 0) // key version: not encrypted
	be.PutUint32(p[filPageOffset:], page)
	be.PutUint64(p[filPageLSN:], lsn)
	be.PutUint32(p[filPageSpaceID:], space)
	if page == 0 {
		be.PutUint32(p[fspSpaceFlags:], FullCRC32Flags)
	}
	be.PutUint32(p[PageSize-8:], uint32(lsn))
	be.PutUint32(p[PageSize-4:], crc32.Checksum(p[:PageSize-4], castagnoli))
	return p
}

// LegacyPage builds an intact page of the older format (crc32 algorithm).
func LegacyPage(page uint32, lsn uint64) []byte {
	p := bytes.Repeat([]byte{7}, PageSize)
	be := binary.BigEndian
	be.PutUint32(p[filPageOffset:], page)
	be.PutUint64(p[filPageLSN:], lsn)
	be.PutUint32(p[PageSize-4:], uint32(lsn))
	sum := crc32.Checksum(p[4:26], castagnoli) ^ crc32.Checksum(p[38:PageSize-8], castagnoli)
	be.PutUint32(p, sum)
	be.PutUint32(p[PageSize-8:], sum)
	return p
}

// Reseal recomputes a full_crc32 page's checksum after an edit.
func Reseal(p []byte) {
	binary.BigEndian.PutUint32(p[PageSize-4:], crc32.Checksum(p[:PageSize-4], castagnoli))
}

// Tear returns the first kept bytes of newP over oldP.
func Tear(oldP, newP []byte, kept int) []byte {
	return append(append([]byte(nil), newP[:kept]...), oldP[kept:]...)
}

// RedoHeader is the start of an ib_logfile0 with the given checkpoints
// (lsn, end); a zero lsn leaves that block invalid.
func RedoHeader(cps ...[2]uint64) []byte {
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

// WritePages writes pages (page number -> content) into a new file.
func WritePages(t testing.TB, path string, pages map[uint32][]byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	for n, p := range pages {
		_, err := f.WriteAt(p, int64(n)*PageSize)
		must(t, err)
	}
}

// TornDatadir lays out what a torn cut leaves: ibdata1 with a doublewrite
// buffer (blocks at pages 64 and 128) holding copies of pages 0 (newer
// than the checkpoint) and 3 (older) of space 7, sbtest/t1.ibd with pages
// 0 and 3 torn, and a redo log whose checkpoint is at LSN 4000.
func TornDatadir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	trx := make([]byte, PageSize)
	h := trx[PageSize-trxSysDblwr:]
	binary.BigEndian.PutUint32(h[dblwrMagicOff:], dblwrMagicN)
	binary.BigEndian.PutUint32(h[dblwrBlock1Off:], 64)
	binary.BigEndian.PutUint32(h[dblwrBlock2Off:], 128)
	WritePages(t, filepath.Join(dir, "ibdata1"), map[uint32][]byte{
		0: FullCRC32Page(0, 0, 10, 's'), trxSysPage: trx,
		64: FullCRC32Page(7, 0, 5000, 'n'), 65: FullCRC32Page(7, 3, 100, 'n'), 191: FullCRC32Page(0, 300, 5000, 'x')})
	WritePages(t, filepath.Join(dir, "sbtest", "t1.ibd"), map[uint32][]byte{
		0: Tear(FullCRC32Page(7, 0, 3000, 'o'), FullCRC32Page(7, 0, 5000, 'n'), 8192),
		3: Tear(FullCRC32Page(7, 3, 50, 'o'), FullCRC32Page(7, 3, 100, 'n'), 4096),
		5: FullCRC32Page(7, 5, 60, 'o')})
	must(t, os.WriteFile(filepath.Join(dir, "ib_logfile0"), RedoHeader([2]uint64{4000, 4500}), 0o644))
	return dir
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
