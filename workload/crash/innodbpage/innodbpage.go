// Package innodbpage reads what a power-cut report needs of InnoDB's
// on-disk formats (MariaDB 10.8 and later, storage/innobase of 10.11):
// whether a page is intact (full_crc32 or crc32 checksums), the durable
// doublewrite buffer in the system tablespace and the copies it holds,
// and the redo log's latest checkpoint. It imports nothing of ours.
package innodbpage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// The files are read after a cut, before the restart touches them, so
// the report can say of each torn page whether the durable doublewrite
// buffer held a copy that recovery could take.

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

// A page's states (Format.State).
const (
	Valid   = "valid"
	Corrupt = "corrupt"
	Zero    = "zero" // never written: all zero bytes
)

// Format is what decides how a tablespace's pages are checked.
type Format struct {
	PageSize  int
	FullCRC32 bool // innodb_checksum_algorithm=full_crc32 (MariaDB 10.5+ default)
}

// FormatOf reads FSP_SPACE_FLAGS from a tablespace's first page (only its
// first 4 KiB, which a tear at 4 KiB boundaries never splits).
func FormatOf(flags uint32) (Format, error) {
	if flags&(1<<4) != 0 { // FSP_FLAGS_FCRC32_MASK_MARKER
		if ss := flags & 15; ss >= 3 && ss <= 7 {
			return Format{PageSize: 512 << ss, FullCRC32: true}, nil
		}
	} else {
		switch ss := flags >> 6 & 15; {
		case ss == 0:
			return Format{PageSize: 16 << 10}, nil
		case ss >= 3 && ss <= 7:
			return Format{PageSize: 512 << ss}, nil
		}
	}
	return Format{}, fmt.Errorf("tablespace flags %#x: unknown page size", flags)
}

// ReadFormat reads the format of the tablespace file path.
func ReadFormat(path string) (Format, error) {
	b := make([]byte, minPageSize)
	if err := ReadAt(path, b, 0); err != nil {
		return Format{}, err
	}
	return FormatOf(binary.BigEndian.Uint32(b[fspSpaceFlags:]))
}

// State checks p as buf_page_is_corrupted() does for uncompressed,
// unencrypted pages: full_crc32 (CRC-32C of all but the last 4 bytes,
// and the low LSN bytes repeated at the end), or the crc32 algorithm of
// the older format. Anything else reads as corrupt.
func (f Format) State(p []byte) string {
	n := len(p)
	if allZero(p) {
		return Zero
	}
	be := binary.BigEndian
	if f.FullCRC32 {
		if crc32.Checksum(p[:n-4], castagnoli) != be.Uint32(p[n-4:]) ||
			be.Uint32(p) == 0 && be.Uint32(p[filPageLSN+4:]) != be.Uint32(p[n-8:]) {
			return Corrupt
		}
		return Valid
	}
	sum := crc32.Checksum(p[4:26], castagnoli) ^ crc32.Checksum(p[38:n-8], castagnoli)
	if be.Uint32(p[filPageLSN+4:]) != be.Uint32(p[n-4:]) || be.Uint32(p) != sum {
		return Corrupt
	}
	return Valid
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// SpaceID is the tablespace id a page says it belongs to.
func SpaceID(p []byte) uint32 { return binary.BigEndian.Uint32(p[filPageSpaceID:]) }

// Copy is one page found in the doublewrite buffer.
type Copy struct {
	Space, Page uint32
	LSN         uint64
	Data        []byte
}

// Doublewrite is the durable content of the doublewrite buffer: two
// blocks of one extent each in the first system tablespace file
// (buf_dblwr_t::init_or_load_pages).
type Doublewrite struct {
	block1, block2, blockPages uint32
	pages                      []Copy
}

// Copies are every page the buffer holds, intact or not, in its order.
func (d *Doublewrite) Copies() []Copy { return d.pages }

// InArea reports whether page of the system tablespace is part of the
// doublewrite buffer itself.
func (d *Doublewrite) InArea(page uint32) bool {
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

// ReadDoublewrite reads the doublewrite buffer of the system tablespace
// file ibdata (pages of size f.PageSize).
func ReadDoublewrite(ibdata string, f Format) (*Doublewrite, error) {
	ps := f.PageSize
	sys := make([]byte, ps)
	if err := ReadAt(ibdata, sys, int64(trxSysPage*ps)); err != nil {
		return nil, err
	}
	h := sys[ps-trxSysDblwr:]
	be := binary.BigEndian
	if be.Uint32(h[dblwrMagicOff:]) != dblwrMagicN {
		return nil, fmt.Errorf("%s: no doublewrite buffer in the TRX_SYS page", ibdata)
	}
	d := &Doublewrite{block1: be.Uint32(h[dblwrBlock1Off:]), block2: be.Uint32(h[dblwrBlock2Off:]), blockPages: extentPages(ps)}
	for _, b := range []uint32{d.block1, d.block2} {
		buf := make([]byte, int(d.blockPages)*ps)
		if err := ReadAt(ibdata, buf, int64(b)*int64(ps)); err != nil {
			return nil, err
		}
		for i := 0; i < len(buf); i += ps {
			p := buf[i : i+ps]
			if allZero(p) {
				continue
			}
			d.pages = append(d.pages, Copy{Space: be.Uint32(p[filPageSpaceID:]), Page: be.Uint32(p[filPageOffset:]),
				LSN: be.Uint64(p[filPageLSN:]), Data: p})
		}
	}
	return d, nil
}

// CopyOf returns the newest intact copy of (space, page) in the
// doublewrite buffer, checked with the tablespace's format f.
func (d *Doublewrite) CopyOf(space, page uint32, f Format) (Copy, bool) {
	var best Copy
	found := false
	for _, p := range d.pages {
		if p.Space != space || p.Page != page || len(p.Data) != f.PageSize || f.State(p.Data) != Valid {
			continue
		}
		if !found || p.LSN > best.LSN {
			best, found = p, true
		}
	}
	return best, found
}

// redoCheckpoint reads the latest valid checkpoint LSN of a MariaDB 10.8+
// redo log (ib_logfile0): recovery ignores doublewrite copies older than
// it (recv_dblwr_t::find_page).
func RedoCheckpoint(logfile string) (uint64, error) {
	b := make([]byte, redoCheckpoint2+64)
	if err := ReadAt(logfile, b, 0); err != nil {
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

// ReadAt fills b from path at off; a file that ends first is an error.
func ReadAt(path string, b []byte, off int64) error {
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
