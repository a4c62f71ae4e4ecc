package crash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// What a power-cut report needs of InnoDB's on-disk formats (MariaDB
// 10.8 and later, storage/innobase of 10.11): whether a page is intact,
// the doublewrite buffer in the system tablespace, and the redo log's
// checkpoint. The files are read after the cut, before the restart
// touches them, so the report can say of each torn page whether the
// durable doublewrite buffer held a copy that recovery could take.

// Offsets in a page (fil0fil.h, fsp0fsp.h).
const (
	filPageOffset  = 4  // FIL_PAGE_OFFSET: the page number
	filPageLSN     = 16 // FIL_PAGE_LSN
	filPageSpaceID = 34 // FIL_PAGE_SPACE_ID
	fspSpaceFlags  = 38 + 16
)

// The doublewrite buffer's header in the TRX_SYS page (trx0sys.h).
const (
	trxSysPage      = 5
	trxSysDblwr     = 200 // TRX_SYS_DOUBLEWRITE = page size - 200
	dblwrMagicN     = 536853855
	dblwrMagicOff   = 10 // after the 10-byte fseg header
	dblwrBlock1Off  = 14
	dblwrBlock2Off  = 18
	minPageSize     = 4096
	redoFormat108   = 0x50687973 // log_t::FORMAT_10_8 ("Phys")
	redoCheckpoint1 = 4096
	redoCheckpoint2 = 8192
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Page states after the cut.
const (
	pageValid   = "valid"
	pageCorrupt = "corrupt"
	pageZero    = "zero" // never written: all zero bytes
)

// spaceFormat is what decides how a tablespace's pages are checked.
type spaceFormat struct {
	pageSize  int
	fullCRC32 bool // innodb_checksum_algorithm=full_crc32 (MariaDB 10.5+ default)
}

// formatOf reads FSP_SPACE_FLAGS from a tablespace's first page (only its
// first 4 KiB, which a tear at 4 KiB boundaries never splits).
func formatOf(flags uint32) (spaceFormat, error) {
	if flags&(1<<4) != 0 { // FSP_FLAGS_FCRC32_MASK_MARKER
		if ss := flags & 15; ss >= 3 && ss <= 7 {
			return spaceFormat{pageSize: 512 << ss, fullCRC32: true}, nil
		}
	} else {
		switch ss := flags >> 6 & 15; {
		case ss == 0:
			return spaceFormat{pageSize: 16 << 10}, nil
		case ss >= 3 && ss <= 7:
			return spaceFormat{pageSize: 512 << ss}, nil
		}
	}
	return spaceFormat{}, fmt.Errorf("tablespace flags %#x: unknown page size", flags)
}

// readFormat reads the format of the tablespace file path.
func readFormat(path string) (spaceFormat, error) {
	b := make([]byte, minPageSize)
	if err := readAt(path, b, 0); err != nil {
		return spaceFormat{}, err
	}
	return formatOf(binary.BigEndian.Uint32(b[fspSpaceFlags:]))
}

// pageState checks p as buf_page_is_corrupted() does for uncompressed,
// unencrypted pages: full_crc32 (CRC-32C of all but the last 4 bytes,
// and the low LSN bytes repeated at the end), or the crc32 algorithm of
// the older format. Anything else reads as corrupt.
func (f spaceFormat) pageState(p []byte) string {
	n := len(p)
	if allZero(p) {
		return pageZero
	}
	be := binary.BigEndian
	if f.fullCRC32 {
		if crc32.Checksum(p[:n-4], castagnoli) != be.Uint32(p[n-4:]) ||
			be.Uint32(p) == 0 && be.Uint32(p[filPageLSN+4:]) != be.Uint32(p[n-8:]) {
			return pageCorrupt
		}
		return pageValid
	}
	sum := crc32.Checksum(p[4:26], castagnoli) ^ crc32.Checksum(p[38:n-8], castagnoli)
	if be.Uint32(p[filPageLSN+4:]) != be.Uint32(p[n-4:]) || be.Uint32(p) != sum {
		return pageCorrupt
	}
	return pageValid
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// dblwrPage is one page found in the doublewrite buffer.
type dblwrPage struct {
	space, page uint32
	lsn         uint64
	data        []byte
}

// doublewrite is the durable content of the doublewrite buffer: two
// blocks of one extent each in the first system tablespace file
// (buf_dblwr_t::init_or_load_pages).
type doublewrite struct {
	block1, block2, blockPages uint32
	pages                      []dblwrPage
}

// inArea reports whether page of the system tablespace is part of the
// doublewrite buffer itself.
func (d *doublewrite) inArea(page uint32) bool {
	in := func(b uint32) bool { return page >= b && page < b+d.blockPages }
	return in(d.block1) || in(d.block2)
}

// extentPages is FSP_EXTENT_SIZE: 1 MiB of pages, at least 64.
func extentPages(pageSize int) uint32 {
	if pageSize <= 16<<10 {
		return uint32(1 << 20 / pageSize)
	}
	return 64
}

// readDoublewrite reads the doublewrite buffer of the system tablespace
// file ibdata (pages of size f.pageSize).
func readDoublewrite(ibdata string, f spaceFormat) (*doublewrite, error) {
	ps := f.pageSize
	sys := make([]byte, ps)
	if err := readAt(ibdata, sys, int64(trxSysPage*ps)); err != nil {
		return nil, err
	}
	h := sys[ps-trxSysDblwr:]
	be := binary.BigEndian
	if be.Uint32(h[dblwrMagicOff:]) != dblwrMagicN {
		return nil, fmt.Errorf("%s: no doublewrite buffer in the TRX_SYS page", ibdata)
	}
	d := &doublewrite{block1: be.Uint32(h[dblwrBlock1Off:]), block2: be.Uint32(h[dblwrBlock2Off:]), blockPages: extentPages(ps)}
	for _, b := range []uint32{d.block1, d.block2} {
		buf := make([]byte, int(d.blockPages)*ps)
		if err := readAt(ibdata, buf, int64(b)*int64(ps)); err != nil {
			return nil, err
		}
		for i := 0; i < len(buf); i += ps {
			p := buf[i : i+ps]
			if allZero(p) {
				continue
			}
			d.pages = append(d.pages, dblwrPage{space: be.Uint32(p[filPageSpaceID:]), page: be.Uint32(p[filPageOffset:]),
				lsn: be.Uint64(p[filPageLSN:]), data: p})
		}
	}
	return d, nil
}

// copyOf returns the newest intact copy of (space, page) in the
// doublewrite buffer, checked with the tablespace's format f.
func (d *doublewrite) copyOf(space, page uint32, f spaceFormat) (dblwrPage, bool) {
	var best dblwrPage
	found := false
	for _, p := range d.pages {
		if p.space != space || p.page != page || len(p.data) != f.pageSize || f.pageState(p.data) != pageValid {
			continue
		}
		if !found || p.lsn > best.lsn {
			best, found = p, true
		}
	}
	return best, found
}

// redoCheckpoint reads the latest valid checkpoint LSN of a MariaDB 10.8+
// redo log (ib_logfile0): recovery ignores doublewrite copies older than
// it (recv_dblwr_t::find_page).
func redoCheckpoint(logfile string) (uint64, error) {
	b := make([]byte, redoCheckpoint2+64)
	if err := readAt(logfile, b, 0); err != nil {
		return 0, err
	}
	be := binary.BigEndian
	if f := be.Uint32(b); f != redoFormat108 {
		return 0, fmt.Errorf("%s: redo log format %#x, not MariaDB 10.8+ (unencrypted)", logfile, f)
	}
	var lsn uint64
	for _, off := range []int{redoCheckpoint1, redoCheckpoint2} {
		c := b[off : off+64]
		cp, end := be.Uint64(c), be.Uint64(c[8:])
		if end < cp || !allZero(c[16:60]) || crc32.Checksum(c[:60], castagnoli) != be.Uint32(c[60:]) {
			continue
		}
		lsn = max(lsn, cp)
	}
	if lsn == 0 {
		return 0, fmt.Errorf("%s: no valid checkpoint", logfile)
	}
	return lsn, nil
}

// readAt fills b from path at off; a file that ends first is an error.
func readAt(path string, b []byte, off int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read %s at %d: %w", path, off, err)
	}
	return nil
}
