package fio

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// aioState is one clone's kernel AIO context and its iodepth request slots.
// Slots are preallocated; the per-I/O path only moves indices.
type aioState struct {
	ctx      uintptr
	cbs      []iocb
	list     []*iocb // prepared, not yet accepted by io_submit
	pending  int
	events   []ioEvent
	free     []int
	start    []int64 // per slot: ns since base when prepared
	issue    []int64 // per slot: ns since base when io_submit returned
	dir      []int
	prio     []uint8 // per slot: cmdprio index
	inflight int
	ts       unix.Timespec // io_getevents timeout, so a stop is seen
}

func (c *clone) newAIO() (*aioState, error) {
	depth := int(c.job.Iodepth)
	ctx, err := aioSetup(depth)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", c.job.Name, err)
	}
	a := &aioState{
		ctx: ctx, cbs: make([]iocb, depth), list: make([]*iocb, depth),
		events: make([]ioEvent, depth), free: make([]int, 0, depth),
		start: make([]int64, depth), issue: make([]int64, depth), dir: make([]int, depth), prio: make([]uint8, depth),
		ts: unix.NsecToTimespec(int64(200 * time.Millisecond)),
	}
	for i := depth - 1; i >= 0; i-- {
		buf := c.bufs.buf(i, c.job.Bs)
		a.cbs[i] = iocb{data: uint64(i), fildes: uint32(c.fd),
			buf: uint64(uintptr(unsafe.Pointer(&buf[0]))), nbytes: c.job.Bs}
		a.free = append(a.free, i)
	}
	return a, nil
}

// runAIO is the libaio loop: keep iodepth requests in flight, submit every
// iodepth_batch_submit prepared, reap iodepth_batch_complete_min to _max
// completions per io_getevents (1 and 1 by default) and, once the queue
// was full, down to iodepth_low, as fio does. A sync due after N
// writes is issued, as fio's libaio engine does, once every prepared
// request has been submitted, as a blocking call while the others fly.
func (c *clone) runAIO() error {
	a, err := c.newAIO()
	if err != nil {
		return err
	}
	defer aioDestroy(a.ctx)
	return c.drive(aioQueue{c, a})
}

// aioQueue is the libaio engine as drive sees it.
type aioQueue struct {
	c *clone
	a *aioState
}

func (q aioQueue) fill() (bool, error) { return q.c.fill(q.a) }
func (q aioQueue) submit() error       { return q.c.submit(q.a) }
func (q aioQueue) reap() error         { return q.c.reap(q.a) }
func (q aioQueue) inflight() int       { return q.a.inflight }

// queue is an engine that keeps iodepth requests in flight.
type queue interface {
	// fill prepares requests into the free slots; true: no more I/O.
	fill() (bool, error)
	// submit hands the prepared requests to the kernel.
	submit() error
	// reap waits for and accounts a completion.
	reap() error
	inflight() int
}

// drive is the loop of the queueing engines: fill the free slots, submit,
// reap, until the job has no more I/O or is told to stop, then drain what
// is in flight. A full queue is reaped down to iodepth_low before it is
// filled again, as fio's wait_for_completions.
func (c *clone) drive(q queue) error {
	exhausted := false
	for {
		stopping := c.tick(c.now())
		if c.lat != nil && c.recording && !stopping {
			if err := c.latCheck(q, c.rec); err != nil {
				return err
			}
		}
		if !stopping && !exhausted {
			var err error
			if exhausted, err = q.fill(); err != nil {
				return err
			}
		}
		if err := q.submit(); err != nil {
			return err
		}
		if q.inflight() == 0 {
			if stopping || exhausted {
				return nil
			}
			continue
		}
		full := q.inflight() >= c.qd.depth
		if err := q.reap(); err != nil {
			return err
		}
		for full && q.inflight() > c.qd.low {
			if err := q.reap(); err != nil {
				return err
			}
		}
	}
}

// fill prepares requests into every free slot; it reports true when the
// job has no more I/O to issue.
func (c *clone) fill(a *aioState) (bool, error) {
	for len(a.free) > 0 && !c.latFull(len(a.cbs)-len(a.free)) {
		op, off, n := c.nextOp()
		switch op {
		case opDone:
			return true, nil
		case opBusy:
			return false, nil
		case opSync:
			if err := c.submit(a); err != nil {
				return false, err
			}
			if err := c.doSync(); err != nil {
				return false, err
			}
			continue
		case opVerify, opThink, opPass:
			// the blocks are read back (the pause starts) once what flies
			// completed
			if err := c.submit(a); err != nil {
				return false, err
			}
			for a.inflight > 0 {
				if err := c.reap(a); err != nil {
					return false, err
				}
			}
			if err := c.drained(op); err != nil {
				return false, err
			}
			continue
		case dirTrim:
			if err := c.submit(a); err != nil {
				return false, err
			}
			if err := c.trimNow(off, n); err != nil {
				return false, err
			}
			continue
		}
		if c.rate.until > 0 {
			// fio's io_u_quiesce (io_submit_mode=inline): what flies
			// completes before the rate wait.
			if err := c.submit(a); err != nil {
				return false, err
			}
			for a.inflight > 0 {
				if err := c.reap(a); err != nil {
					return false, err
				}
			}
			c.pace()
		}
		slot := a.free[len(a.free)-1]
		a.free = a.free[:len(a.free)-1]
		cb := &a.cbs[slot]
		cb.opcode = iocbCmdPread
		if op == dirWrite {
			cb.opcode = iocbCmdPwrite
		}
		cb.offset, cb.nbytes, cb.fildes = int64(off), n, uint32(c.fd)
		if c.prio != nil {
			c.setAIOPrio(a, slot, op, n)
		}
		if op == dirWrite {
			c.prepWrite(c.bufs.buf(slot, n), off)
		}
		a.dir[slot] = op
		a.start[slot] = c.now()
		a.list[a.pending] = cb
		a.pending++
		if a.pending >= c.qd.submit {
			// fio commits (io_submit) every iodepth_batch_submit
			// requests queued; what is left goes before the next wait.
			if err := c.submit(a); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// submit hands every prepared request to the kernel. When the kernel takes
// only part (EAGAIN), it reaps a completion and tries again.
func (c *clone) submit(a *aioState) error {
	for a.pending > 0 {
		n, errno := aioSubmit(a.ctx, a.list[:a.pending])
		switch errno {
		case 0:
		case unix.EAGAIN, unix.EINTR:
			n = 0
		default:
			return fmt.Errorf("job %s: io_submit on %s: %w", c.job.Name, c.path, errno)
		}
		now := c.now()
		for _, cb := range a.list[:n] {
			a.issue[cb.data] = now
		}
		a.inflight += n
		if c.recording && n > 0 {
			c.st.level[levelIndex(a.inflight)] += int64(n)
			c.st.submit[batchIndex(n)]++
			c.st.submits++
		}
		copy(a.list, a.list[n:a.pending])
		a.pending -= n
		if n == 0 && a.inflight > 0 {
			if err := c.reap(a); err != nil {
				return err
			}
		} else if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// reap waits for iodepth_batch_complete_min completions and accounts the
// up to iodepth_batch_complete_max returned. fio 3.33's defaults are 1 and
// 1 (strace shows io_getevents(ctx, 1, 1, ...)): fio reaps one
// completion, refills that slot, and so keeps the queue full. Reaping more
// at once would let the queue drain while fsync=N blocks the refill, which
// changes queue depth and clat; so we reap as fio does.
func (c *clone) reap(a *aioState) error {
	lo, hi := c.qd.reapRange(a.inflight)
	n, errno := aioGetEvents(a.ctx, lo, a.events[:hi], &a.ts)
	if errno == unix.EINTR {
		return nil
	}
	if errno != 0 {
		return fmt.Errorf("job %s: io_getevents: %w", c.job.Name, errno)
	}
	now := c.now()
	for _, ev := range a.events[:n] {
		slot := int(ev.data)
		a.free = append(a.free, slot)
		a.inflight--
		if ev.res < 0 {
			if err := c.ioFailed(a.dir[slot], uint64(a.cbs[slot].offset), a.cbs[slot].nbytes, unix.Errno(-ev.res)); err != nil {
				return err
			}
			continue
		}
		c.prioIdx = a.prio[slot]
		c.complete(a.dir[slot], a.start[slot], a.issue[slot], now, ev.res, int64(a.cbs[slot].nbytes), uint64(a.cbs[slot].offset), true)
		if a.dir[slot] == dirRead && c.checkReads {
			if err := c.checkRead(c.bufs.buf(slot, uint64(ev.res)), uint64(a.cbs[slot].offset)); err != nil {
				return err
			}
		}
	}
	if c.recording && n > 0 {
		c.st.complete[batchIndex(n)]++
		c.st.completes++
	}
	return nil
}

// setAIOPrio gives slot's request the priority cmdprio draws for it
// (IOCB_FLAG_IOPRIO with aio_reqprio, as fio's libaio engine), or none.
func (c *clone) setAIOPrio(a *aioState, slot, op int, n uint64) {
	cb := &a.cbs[slot]
	cb.flags &^= iocbFlagIOPrio
	cb.reqprio, a.prio[slot] = 0, 0
	if v, idx, ok := c.prio.pick(op, n); ok {
		cb.flags |= iocbFlagIOPrio
		cb.reqprio, a.prio[slot] = int16(v), idx
	}
}
