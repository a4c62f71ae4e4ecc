package fio

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// uringState is one clone's io_uring and its iodepth request slots: slot i
// is SQE i, with buffer i; the per-I/O path fills fields and moves
// indices.
type uringState struct {
	r        *uring
	bufAddr  []uint64
	free     []int
	queue    []int   // pushed to the ring, not yet submitted, oldest first
	start    []int64 // per slot: ns since base when prepared
	issue    []int64 // per slot: ns since base when io_uring_enter took it
	dir      []int
	prio     []uint8 // per slot: cmdprio index
	inflight int
}

func (c *clone) newUring() (*uringState, error) {
	depth := int(c.job.Iodepth)
	r, err := newUring(depth)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", c.job.Name, err)
	}
	u := &uringState{r: r, bufAddr: make([]uint64, depth), free: make([]int, 0, depth),
		queue: make([]int, 0, depth), start: make([]int64, depth), issue: make([]int64, depth), dir: make([]int, depth),
		prio: make([]uint8, depth)}
	for i := depth - 1; i >= 0; i-- {
		buf := c.bufs.buf(i, c.job.Bs)
		u.bufAddr[i] = uint64(uintptr(unsafe.Pointer(&buf[0])))
		u.free = append(u.free, i)
	}
	return u, nil
}

// runUring is the io_uring loop, as fio 3.33's io_uring engine drives it
// with its defaults (no SQ polling, no registered files or buffers,
// non-vectored IORING_OP_READ/WRITE): keep iodepth requests in flight,
// submit what is queued with one io_uring_enter, take completions from the
// ring and enter the kernel to wait only when there is none. Unlike
// libaio, a sync that fsync=N asks for is a request in the ring too
// (IORING_OP_FSYNC, with IORING_FSYNC_DATASYNC for fdatasync), flying
// beside the writes, as fio queues it (see clone.asyncSync for how many).
func (c *clone) runUring() error {
	u, err := c.newUring()
	if err != nil {
		return err
	}
	defer u.r.close()
	c.asyncSync = true
	return c.drive(uringQueue{c, u})
}

// uringQueue is the io_uring engine as drive sees it.
type uringQueue struct {
	c *clone
	u *uringState
}

func (q uringQueue) fill() (bool, error) { return q.c.fillUring(q.u) }
func (q uringQueue) submit() error       { return q.c.submitUring(q.u) }
func (q uringQueue) reap() error         { return q.c.reapUring(q.u) }
func (q uringQueue) inflight() int       { return q.u.inflight }

// fillUring prepares requests into every free slot; it reports true when
// the job has no more I/O to issue.
func (c *clone) fillUring(u *uringState) (bool, error) {
	for len(u.free) > 0 && !c.latFull(len(u.start)-len(u.free)) {
		op, off, n := c.nextOp()
		if op == opDone {
			return true, nil
		}
		if op == opBusy {
			return false, nil
		}
		if op == opVerify || op == opThink || op == opPass {
			if err := c.submitUring(u); err != nil {
				return false, err
			}
			for u.inflight > 0 {
				if err := c.reapUring(u); err != nil {
					return false, err
				}
			}
			if err := c.drained(op); err != nil {
				return false, err
			}
			continue
		}
		if op == dirTrim {
			if err := c.submitUring(u); err != nil {
				return false, err
			}
			if err := c.trimNow(off, n); err != nil {
				return false, err
			}
			continue
		}
		if c.rate.until > 0 {
			// fio's io_u_quiesce, as in fill.
			if err := c.submitUring(u); err != nil {
				return false, err
			}
			for u.inflight > 0 {
				if err := c.reapUring(u); err != nil {
					return false, err
				}
			}
			c.pace()
		}
		slot := u.free[len(u.free)-1]
		u.free = u.free[:len(u.free)-1]
		sqe := &u.r.sqes[slot]
		sqe.fd, sqe.userData, sqe.ioprio = int32(c.fd), uint64(slot), 0
		u.prio[slot] = 0
		if c.prio != nil && op != opSync {
			if v, idx, ok := c.prio.pick(op, n); ok {
				sqe.ioprio, u.prio[slot] = v, idx
			}
		}
		switch op {
		case opSync:
			sqe.opcode, sqe.off, sqe.addr, sqe.len, sqe.opFlags = uringOpFsync, 0, 0, 0, 0
			if c.datasync {
				sqe.opFlags = uringFsyncDatasync
			}
		default:
			sqe.opcode = uringOpRead
			if op == dirWrite {
				sqe.opcode = uringOpWrite
			}
			sqe.off, sqe.addr, sqe.len, sqe.opFlags = off, u.bufAddr[slot], uint32(n), 0
			if op == dirWrite {
				c.prepWrite(c.bufs.buf(slot, n), off)
			}
		}
		u.dir[slot] = op
		u.start[slot] = c.now()
		u.r.push(uint32(slot))
		u.queue = append(u.queue, slot)
		if len(u.queue) >= c.qd.submit {
			// fio commits every iodepth_batch_submit requests queued.
			if err := c.submitUring(u); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// submitUring hands every queued request to the kernel. When it takes
// none (EAGAIN, EBUSY: the completion ring is full), it reaps a
// completion and tries again.
func (c *clone) submitUring(u *uringState) error {
	for len(u.queue) > 0 {
		n, errno := u.r.enter(len(u.queue), 0)
		switch errno {
		case 0:
		case unix.EAGAIN, unix.EBUSY, unix.EINTR:
			n = 0
		default:
			return fmt.Errorf("job %s: io_uring_enter on %s: %w", c.job.Name, c.path, errno)
		}
		now := c.now()
		for _, slot := range u.queue[:n] {
			u.issue[slot] = now
		}
		u.inflight += n
		if c.recording && n > 0 {
			c.st.level[levelIndex(u.inflight)] += int64(n)
			c.st.submit[batchIndex(n)]++
			c.st.submits++
		}
		u.queue = u.queue[:copy(u.queue, u.queue[n:])]
		u.r.queued -= n
		if n == 0 && u.inflight > 0 {
			if err := c.reapUring(u); err != nil {
				return err
			}
		} else if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// reapUring waits for iodepth_batch_complete_min completions and takes
// up to iodepth_batch_complete_max (1 and 1 by default, as fio reaps),
// entering the kernel to wait only when the ring has too few.
func (c *clone) reapUring(u *uringState) error {
	lo, hi := c.qd.reapRange(u.inflight)
	got := 0
	var err error
	for got < hi && err == nil {
		cqe, ok := u.r.peek()
		if !ok {
			if got >= lo {
				break
			}
			_, errno := u.r.enter(0, lo-got)
			switch errno {
			case 0:
				continue
			case unix.EINTR, unix.EAGAIN:
			default:
				err = fmt.Errorf("job %s: io_uring_enter: %w", c.job.Name, errno)
			}
			break
		}
		u.r.advance()
		got++
		err = c.completeCQE(u, cqe)
	}
	if c.recording && got > 0 {
		c.st.complete[batchIndex(got)]++
		c.st.completes++
	}
	return err
}

// completeCQE accounts one completion.
func (c *clone) completeCQE(u *uringState, cqe uringCQE) error {
	now := c.now()
	slot := int(cqe.userData)
	u.free = append(u.free, slot)
	u.inflight--
	d := u.dir[slot]
	c.lastWasSync = d == opSync
	switch {
	case cqe.res < 0 && d == opSync:
		return c.syncError(unix.Errno(-cqe.res))
	case cqe.res < 0:
		return c.ioFailed(d, u.r.sqes[slot].off, uint64(u.r.sqes[slot].len), unix.Errno(-cqe.res))
	case d == opSync:
		c.completeSync(u.start[slot], now)
	default:
		c.prioIdx = u.prio[slot]
		c.complete(d, u.start[slot], u.issue[slot], now, int64(cqe.res), int64(u.r.sqes[slot].len), u.r.sqes[slot].off, true)
		if d == dirRead && c.checkReads {
			if err := c.checkRead(c.bufs.buf(slot, uint64(cqe.res)), u.r.sqes[slot].off); err != nil {
				return err
			}
		}
	}
	return nil
}
