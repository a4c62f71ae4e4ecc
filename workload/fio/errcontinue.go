package fio

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// continue_on_error and ignore_error as fio 3.33's td_error.c: an I/O
// error is typed verify (EILSEQ), read (a read) or write (anything
// else); when continue_on_error has the type's bit and the error is in
// the type's list (fio's EIO and EILSEQ unless ignore_error= gives one),
// the I/O is counted as issued, its bytes and latency are not, the
// error is counted (total_err; the first one is first_error and the
// job's "error") and the job goes on. Any other error stops the job.
const (
	errTypeRead   = 1 << 0
	errTypeWrite  = 1 << 1
	errTypeVerify = 1 << 2
	errTypeAll    = 0xffff
)

// continueValues are continue_on_error's values, fio's.
var continueValues = map[string]uint32{
	"none": 0, "0": 0, "read": errTypeRead, "write": errTypeWrite, "io": errTypeRead | errTypeWrite,
	"verify": errTypeVerify, "all": errTypeAll, "1": errTypeAll,
}

func setContinueOnError(j *fiov1.Job, v string) error {
	m, ok := continueValues[strings.TrimSpace(v)]
	if !ok {
		return fmt.Errorf("%q: want none, read, write, io, verify, all, 0 or 1", v)
	}
	j.ContinueOnError = m
	return nil
}

// errnoNames are the names fio 3.33's str2error knows (errno 1 to 34 in
// order); any other error is given by number.
var errnoNames = strings.Fields(`EPERM ENOENT ESRCH EINTR EIO ENXIO E2BIG ENOEXEC EBADF ECHILD EAGAIN ENOMEM
	EACCES EFAULT ENOTBLK EBUSY EEXIST EXDEV ENODEV ENOTDIR EISDIR EINVAL ENFILE EMFILE ENOTTY
	ETXTBSY EFBIG ENOSPC ESPIPE EROFS EMLINK EPIPE EDOM ERANGE`)

// setIgnoreError reads ignore_error=READ,WRITE,VERIFY, each a list of
// errors separated by ':' (names as fio's str2error, or numbers); a list
// given sets its type's continue_on_error bit, as in fio.
func setIgnoreError(j *fiov1.Job, v string) error {
	lists := []*[]uint32{&j.IgnoreErrorRead, &j.IgnoreErrorWrite, &j.IgnoreErrorVerify}
	for i, part := range strings.Split(strings.TrimSpace(v), ",") {
		if i >= len(lists) {
			return fmt.Errorf("%q: Illegal error type (fio: at most read,write,verify lists)", v)
		}
		var errs []uint32
		for _, name := range strings.Split(part, ":") {
			if name == "" {
				break // fio stops at an empty name
			}
			n, err := errnoOf1(name)
			if err != nil {
				return err
			}
			errs = append(errs, n)
		}
		if len(errs) > 0 {
			*lists[i] = errs
			j.ContinueOnError |= 1 << i
		}
	}
	return nil
}

// errnoOf1 is one ignore_error entry: an E-name fio knows, or a number
// (fio's atoi, sign dropped).
func errnoOf1(name string) (uint32, error) {
	if strings.HasPrefix(name, "E") {
		for i, n := range errnoNames {
			if n == name {
				return uint32(i + 1), nil
			}
		}
		return 0, fmt.Errorf("Unknown error %s, please use number value", name)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "-"))
	if err != nil || n == 0 {
		return 0, fmt.Errorf("Unknown error %s, please use number value", name)
	}
	return uint32(n), nil
}

// nonFatal reports whether errno in direction op lets the job go on,
// and whether continue_on_error covers its type at all (fio then counts
// even the error that stops the job: backend.c's break_on_this_error).
func nonFatal(j *fiov1.Job, op int, errno unix.Errno) (pass, covered bool) {
	typ, list := errTypeWrite, j.IgnoreErrorWrite
	switch {
	case errno == unix.EILSEQ:
		typ, list = errTypeVerify, j.IgnoreErrorVerify
	case op == dirRead:
		typ, list = errTypeRead, j.IgnoreErrorRead
	}
	if j.ContinueOnError&uint32(typ) == 0 {
		return false, false
	}
	if len(list) == 0 {
		return errno == unix.EIO || errno == unix.EILSEQ, true
	}
	for _, e := range list {
		if unix.Errno(e) == errno {
			return true, true
		}
	}
	return false, true
}

// ioFailed handles a failed read, write or trim: nil when the job goes
// on (the error counted), else the error that stops it. Either way the
// I/O counts as issued, as fio's total_ios.
func (c *clone) ioFailed(op int, off, n uint64, err error) error {
	if c.recording && op < nDirs {
		c.st.dir[op].errored++
	}
	var errno unix.Errno
	if c.job.FillDevice && op == dirWrite && (errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)) {
		c.filled = true // fio: the expected end of a fill_device job
		// which fio logs as any io_u error (and then clears)
		c.logIOError(dirLabel[dirWrite], off, n, unix.Errno(errnoOf(err)))
		return nil
	}
	if c.job.ContinueOnError != 0 && errors.As(err, &errno) {
		pass, covered := nonFatal(c.job, op, errno)
		if covered {
			c.countError(errno)
		}
		if pass {
			return nil
		}
	}
	return c.ioError(op, off, n, err)
}

// jobErrno is the report's "error": the errno that stopped the job, or
// the first one continue_on_error let pass (fio's ts->error).
func jobErrno(e entry) int {
	if e.err == nil && e.job.ContinueOnError != 0 {
		return e.st.firstError
	}
	return errnoOf(e.err)
}

// strerror is C's text for errno n ("Success" for 0), as fio prints it.
func strerror(n int) string {
	if n == 0 {
		return "Success"
	}
	s := unix.Errno(n).Error()
	return strings.ToUpper(s[:1]) + s[1:]
}

// countError is fio's update_error_count.
func (c *clone) countError(errno unix.Errno) {
	c.st.totalErr++
	if c.st.totalErr == 1 {
		c.st.firstError = int(errno)
	}
}

// verifyContinues takes the verify failures continue_on_error lets pass:
// counted, and the job ends well.
func (c *clone) verifyContinues() bool {
	v := c.verify
	if v == nil || v.first == nil {
		return false
	}
	if pass, _ := nonFatal(c.job, dirRead, unix.EILSEQ); !pass {
		return false
	}
	for range v.failures {
		c.countError(unix.EILSEQ)
	}
	return true
}

// fillSize is a fill_device job's region without size=: a block device's
// size, or for a file the size of its whole filesystem (no file outgrows
// it, so the job ends at ENOSPC, as fio's, whose size is then unbounded).
func fillSize(c *clone) (uint64, error) {
	j := c.job
	if st, err := c.file.Stat(); err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
		n, err := realSize(c.file)
		if err != nil || n <= c.offset {
			return 0, fmt.Errorf("job %s: fill_device on %s: size %d, offset %d: %v", j.Name, c.path, n, c.offset, err)
		}
		return n - c.offset, nil
	}
	fs, err := c.file.Dir().Statfs()
	if err != nil {
		return 0, fmt.Errorf("job %s: fill_device: the filesystem of %s: %w", j.Name, c.path, err)
	}
	bs := max(j.Bs, 1)
	return uint64(fs.Blocks) * uint64(fs.Bsize) / bs * bs, nil
}

func isRandomRW(rw fiov1.ReadWrite) bool {
	switch rw {
	case fiov1.ReadWrite_READ_WRITE_RANDREAD, fiov1.ReadWrite_READ_WRITE_RANDWRITE, fiov1.ReadWrite_READ_WRITE_RANDRW,
		fiov1.ReadWrite_READ_WRITE_RANDTRIM, fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE:
		return true
	}
	return false
}
