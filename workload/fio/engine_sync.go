package fio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// runSync is the loop of the synchronous engines (psync, sync, pvsync): one
// I/O at a time, whatever iodepth says, as in fio. Latency: clat is the
// system call, lat adds the preparation.
func (c *clone) runSync() error {
	full := c.bufs.buf(0, c.job.Bs)
	c.iov[0] = unix.Iovec{Base: &full[0]}
	for {
		start := c.now()
		if c.tick(start) {
			return nil
		}
		if c.lat != nil && c.recording {
			if err := c.latCheck(nil, c.rec); err != nil {
				return err
			}
		}
		op, off, want := c.nextOp()
		switch op {
		case opDone:
			return nil
		case opSync:
			if err := c.doSync(); err != nil {
				return err
			}
			continue
		case opVerify:
			if err := c.verifyBacklog(); err != nil {
				return err
			}
			continue
		case opThink:
			c.think()
			continue
		case opBusy:
			continue
		case opPass:
			if err := c.drained(op); err != nil {
				return err
			}
			continue
		}
		if c.rate.until > 0 {
			// As in fio, the rate wait is not latency: lat starts when
			// the I/O is prepared after it. Late starts are counted.
			c.pace()
			start = c.now()
		}
		buf := full[:want]
		if op == dirWrite {
			c.prepWrite(buf, off)
		}
		c.iov[0].SetLen(int(want))
		issue := c.now()
		n, err := c.syncIO(op, buf, off)
		end := c.now()
		if err != nil {
			if err := c.ioFailed(op, off, want, err); err != nil {
				return err
			}
			continue
		}
		if c.recording {
			c.st.level[0]++
			c.st.submit[1]++
			c.st.complete[1]++
			c.st.submits++
			c.st.completes++
		}
		c.complete(op, start, issue, end, int64(n), int64(want), off, false)
		if op == dirRead {
			if err := c.checkRead(buf[:n], off); err != nil {
				return err
			}
		}
	}
}

// syncIO performs one read or write with the job's engine.
func (c *clone) syncIO(op int, buf []byte, off uint64) (int, error) {
	if op == dirTrim {
		return c.trim(off, uint64(len(buf)))
	}
	switch c.job.Ioengine {
	case fiov1.IOEngine_IO_ENGINE_NULL:
		return len(buf), nil
	case fiov1.IOEngine_IO_ENGINE_MMAP:
		return c.mmapIO(op, buf, off)
	case fiov1.IOEngine_IO_ENGINE_SYNC:
		if _, err := unix.Seek(c.fd, int64(off), 0); err != nil {
			return 0, err
		}
		if op == dirRead {
			return unix.Read(c.fd, buf)
		}
		return unix.Write(c.fd, buf)
	case fiov1.IOEngine_IO_ENGINE_PVSYNC2:
		// preadv2/pwritev2 with no flags, as fio's pvsync2 without hipri,
		// nowait or uncached.
		nr := uintptr(unix.SYS_PREADV2)
		if op == dirWrite {
			nr = unix.SYS_PWRITEV2
		}
		n, _, errno := unix.Syscall6(nr, uintptr(c.fd), uintptr(unsafe.Pointer(&c.iov[0])), 1, uintptr(off), 0, 0)
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	case fiov1.IOEngine_IO_ENGINE_PVSYNC:
		nr := uintptr(unix.SYS_PREADV)
		if op == dirWrite {
			nr = unix.SYS_PWRITEV
		}
		// On 64-bit Linux the offset travels whole in pos_l; pos_h is 0.
		n, _, errno := unix.Syscall6(nr, uintptr(c.fd), uintptr(unsafe.Pointer(&c.iov[0])), 1, uintptr(off), 0, 0)
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
	if op == dirRead {
		return unix.Pread(c.fd, buf, int64(off))
	}
	return unix.Pwrite(c.fd, buf, int64(off))
}

// blkDiscard is BLKDISCARD, _IO(0x12, 119).
const blkDiscard = 0x1277

// trim discards n bytes at off as fio's os_trim does on Linux: the
// BLKDISCARD ioctl, which a block device with discard supports and a
// regular file refuses with ENOTTY (fio's error for a trim job on a file
// too). The null engine completes it without a system call.
func (c *clone) trim(off, n uint64) (int, error) {
	return c.trimWith(&c.trimRange, c.fd, off, n)
}

// trimWith is trim with the caller's ioctl argument and descriptor (the
// offload pool's threads each have their own argument, and take the
// request's file).
func (c *clone) trimWith(rng *[2]uint64, fd int, off, n uint64) (int, error) {
	if isNull(c.job) {
		return int(n), nil
	}
	*rng = [2]uint64{off, n}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), blkDiscard, uintptr(unsafe.Pointer(rng)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// trimNow performs a trim a queueing engine was handed, as fio's libaio
// and io_uring engines do: synchronously, from the job's thread, once the
// queue has been submitted, and completes it at once.
func (c *clone) trimNow(off, n uint64) error {
	start := c.now()
	_, err := c.trim(off, n)
	end := c.now()
	if err != nil {
		return c.ioFailed(dirTrim, off, n, err)
	}
	c.prioIdx = 0
	c.complete(dirTrim, start, start, end, int64(n), int64(n), off, false)
	return nil
}

// ioError is the error that ends the job after a failed I/O, logged as
// fio's __io_u_log_error logs it on stderr.
func (c *clone) ioError(op int, off, n uint64, err error) error {
	name := dirLabel[min(op, dirTrim)]
	errno := unix.Errno(errnoOf(err))
	c.logIOError(name, off, n, errno)
	return &fioError{errno: errno, where: whereIOU, fn: "io_u error",
		err: fmt.Errorf("job %s: io_u error on file %s: %s offset=%d, buflen=%d: %w", c.job.Name, c.path, name, off, n, err)}
}

// logIOError is fio's "io_u error" line.
func (c *clone) logIOError(dir string, off, n uint64, errno unix.Errno) {
	c.fiolog.errorf("fio: io_u error on file %s: %s: %s offset=%d, buflen=%d\n", c.path, strerror(int(errno)), dir, off, n)
}
