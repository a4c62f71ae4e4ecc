package fio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// layout prepares a clone's file exactly as fio 3.33's setup_files and
// extend_file do, because the file's state decides what is measured:
//
//   - a file already at least offset+size long is used as it is;
//   - otherwise fio "lays out" the file: a job that reads (or writes with
//     overwrite=1) unlinks it, creates it truncated, reserves the space with
//     fallocate= and then writes it whole with bs-sized buffered writes and
//     an fsync (create_fsync=1), so reads hit real data;
//   - a write-only job with overwrite=0 unlinks it and only reserves the
//     space (fallocate=native leaves unwritten extents on ext4/XFS: the
//     first write to each block then also converts the extent).
//
// A clone with several files lays out those that are too short, with
// fio's one line for all of them first ("Laying out IO files (3 files /
// total 3MiB)"); create_on_open=1 lays nothing out (the files are made
// when opened).
//
// It returns one line per action, in fio's words where fio prints any.
func layout(ctx context.Context, c *clone) ([]string, error) {
	j := c.job
	if j.CreateOnOpen {
		return nil, nil
	}
	var (
		notes []string
		grow  []*cfile
		total uint64
	)
	for _, f := range c.files {
		need := f.offset + f.size
		st, err := f.file.Stat()
		switch {
		case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
			// A block or character device (whose Stat size is 0): fio lays
			// out only regular files. Unlinking it would remove the device
			// node.
			notes = append(notes, fmt.Sprintf("%s: %s is not a regular file, used as is", j.Name, f.path))
		case err == nil && uint64(st.Size) >= need:
			notes = append(notes, fmt.Sprintf("%s: existing file %s (%d bytes) used as is", j.Name, f.path, st.Size))
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("layout %s: %w", f.path, err)
		default:
			grow = append(grow, f)
			total += need
		}
	}
	if len(grow) == 0 {
		return notes, nil
	}
	notes = append([]string{layoutNote(j.Name, len(grow), total)}, notes...)
	for _, f := range grow {
		ln, err := layoutOne(ctx, c, f)
		notes = append(notes, ln...)
		if err != nil {
			return notes, err
		}
	}
	return notes, nil
}

// layoutOne lays one file out: unlinked, created, its space reserved and,
// for a job that reads (or overwrite=1), written whole.
func layoutOne(ctx context.Context, c *clone, cf *cfile) ([]string, error) {
	j := c.job
	need := cf.offset + cf.size
	reads := readsData(j)
	newLayout := reads || j.Overwrite
	if err := cf.file.Remove(); err != nil {
		return nil, fmt.Errorf("layout %s: unlink: %w", cf.path, err)
	}
	flags := os.O_WRONLY | os.O_CREATE
	if newLayout {
		flags |= os.O_TRUNC
	}
	f, err := cf.file.OpenFile(flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", cf.path, err)
	}
	defer f.Close()
	if j.FillDevice {
		// fio's fallocate_file and extend_file neither reserve nor
		// truncate for fill_device: the job writes until the space ends.
		return []string{fmt.Sprintf("%s: created, no space reserved (fill_device)", cf.path)}, nil
	}
	notes := []string{reserve(f, j.Fallocate, need, cf.path)}
	if !newLayout {
		return notes, nil
	}
	if err := writeFile(ctx, f, need, j.Bs, c.seed); err != nil {
		return nil, fmt.Errorf("layout %s: %w", cf.path, err)
	}
	notes = append(notes, fmt.Sprintf("%s: wrote %d bytes and fsynced (job reads or overwrite=1)", cf.path, need))
	return notes, nil
}

// readsData reports whether the job reads, which makes fio write the file
// out in full before the run.
func readsData(j *fiov1.Job) bool {
	switch j.Rw {
	case fiov1.ReadWrite_READ_WRITE_READ, fiov1.ReadWrite_READ_WRITE_RANDREAD,
		fiov1.ReadWrite_READ_WRITE_RW, fiov1.ReadWrite_READ_WRITE_RANDRW:
		return true
	}
	return false
}

// reserve applies fallocate= to a new file, as fio's fallocate_file; a
// failure is reported, not fatal, as in fio.
func reserve(f *os.File, mode fiov1.Fallocate, size uint64, path string) string {
	fd := int(f.Fd())
	var err error
	what := ""
	switch mode {
	case fiov1.Fallocate_FALLOCATE_NONE:
		return fmt.Sprintf("%s: created, no space reserved (fallocate=none)", path)
	case fiov1.Fallocate_FALLOCATE_TRUNCATE:
		what, err = "ftruncate", unix.Ftruncate(fd, int64(size))
	case fiov1.Fallocate_FALLOCATE_KEEP:
		what, err = "fallocate keep-size", unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, int64(size))
	case fiov1.Fallocate_FALLOCATE_POSIX:
		what, err = "posix_fallocate", unix.Fallocate(fd, 0, 0, int64(size))
	default:
		what, err = "fallocate native", unix.Fallocate(fd, 0, 0, int64(size))
	}
	if err != nil {
		return fmt.Sprintf("%s: %s of %d bytes failed: %v (continuing, as fio does)", path, what, size, err)
	}
	return fmt.Sprintf("%s: %s reserved %d bytes (unwritten extents until written)", path, what, size)
}

// writeFile writes size bytes of random data with buffered writes of whole
// multiples of bs after setting the length (fio writes one bs at a time;
// through the page cache the file ends up the same), then fsyncs and drops
// the pages from the cache (fio's create_fsync=1 and invalidate=1).
func writeFile(ctx context.Context, f *os.File, size, bs uint64, seed uint64) error {
	if err := f.Truncate(int64(size)); err != nil {
		return err
	}
	chunk := min(bs, size)
	buf := make([]byte, max(chunk, 1<<20)/chunk*chunk) // whole bs multiples, ~1 MiB per call
	fillRandom(buf, seed)
	for left := size; left > 0; {
		if err := ctx.Err(); err != nil {
			return err // a cancelled layout stops within one 1 MiB write
		}
		n := min(uint64(len(buf)), left)
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
		left -= n
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, int64(size), unix.FADV_DONTNEED)
}
