package fio

import (
	"fmt"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// ioengine=mmap, as fio 3.33's engines/mmap.c: the clone's region is
// mapped MAP_SHARED once, a read copies from the mapping into the buffer
// and a write copies the buffer into it (the copy is the I/O: clat is
// the copy and the page faults it takes); with direct=1 each read or
// write is followed by msync(MS_SYNC) of its range, as fio's "direct"
// for mmap; fsync=, fdatasync= and end_fsync are msync(MS_SYNC) of the
// whole mapping. fio maps the file from its start and reaches past 1 GiB
// with a remap; a 64-bit address space maps the region whole.

func isMmap(j *fiov1.Job) bool { return j.Ioengine == fiov1.IOEngine_IO_ENGINE_MMAP }

// mapFile maps the clone's region [offset, offset+size), page-aligned
// down, with the protection fio's fio_mmap_file gives the job's
// directions, and advises the kernel of sequential or random access (fio's
// default fadvise_hint=1).
func (c *clone) mapFile() error {
	j := c.job
	page := uint64(unix.Getpagesize())
	minBS := min(j.GetReadBs().GetMin(), j.GetWriteBs().GetMin())
	if minBS == 0 {
		minBS = j.Bs
	}
	if minBS%page != 0 && (j.Direct || j.Fsync > 0 || j.Fdatasync > 0) {
		return fmt.Errorf("job %s: %w: mmap options dictate a minimum block size of %d bytes (fio's mmap engine: direct=, fsync= and fdatasync= msync whole pages)", j.Name, ErrInvalidValue, page)
	}
	start, end := c.offset&^(page-1), c.offset+c.size
	var st unix.Stat_t
	if err := unix.Fstat(c.fd, &st); err != nil {
		return fmt.Errorf("job %s: stat %s: %w", j.Name, c.path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && uint64(st.Size) < end {
		// a mapping past the end of the file faults (SIGBUS); fio's mmap
		// engine does not extend files either (FIO_NOEXTEND)
		return fmt.Errorf("job %s: mmap %s: the file is %d bytes, the job's region ends at %d", j.Name, c.path, st.Size, end)
	}
	prot := unix.PROT_READ
	switch {
	case c.does(dirRead) && c.does(dirWrite):
		prot = unix.PROT_READ | unix.PROT_WRITE
	case c.does(dirWrite):
		prot = unix.PROT_WRITE
		if j.Verify != fiov1.Verify_VERIFY_NONE && j.Verify != fiov1.Verify_VERIFY_UNSPECIFIED {
			prot |= unix.PROT_READ
		}
	}
	m, err := unix.Mmap(c.fd, int64(start), int(end-start), prot, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("job %s: mmap %s: %w", j.Name, c.path, err)
	}
	advice := unix.MADV_SEQUENTIAL
	if c.gen.random {
		advice = unix.MADV_RANDOM
	}
	_ = unix.Madvise(m, advice) // advisory, as fio's
	c.mm, c.mmBase = m, start
	return nil
}

// mmapIO is one read or write through the mapping.
func (c *clone) mmapIO(op int, buf []byte, off uint64) (int, error) {
	if off < c.mmBase || off-c.mmBase+uint64(len(buf)) > uint64(len(c.mm)) {
		return 0, unix.EINVAL
	}
	p := c.mm[off-c.mmBase : off-c.mmBase+uint64(len(buf))]
	if op == dirRead {
		copy(buf, p)
	} else {
		copy(p, buf)
	}
	if c.job.Direct {
		// msync wants a page-aligned start: the block's pages
		page := uint64(unix.Getpagesize())
		lo := (off - c.mmBase) &^ (page - 1)
		if err := unix.Msync(c.mm[lo:off-c.mmBase+uint64(len(buf))], unix.MS_SYNC); err != nil {
			return 0, err
		}
	}
	return len(buf), nil
}

// unmapFile drops the mapping (before the file is closed).
func (c *clone) unmapFile() {
	if c.mm != nil {
		_ = unix.Munmap(c.mm)
		c.mm = nil
	}
}
