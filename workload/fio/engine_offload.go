package fio

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// offloadQueue is io_submit_mode=offload as fio's rate_submit.c builds
// it: the job's thread prepares requests and a pool of iodepth submitter
// threads performs each one synchronously with the sync engine, posting
// its completion back; the job's thread accounts completions. slat is the
// time a request waited for a submitter, clat its system call. Positioned
// calls (pread/pwrite) are used whatever the sync engine, since the
// submitters share one descriptor (sync's lseek+read would race).
type offloadQueue struct {
	c       *clone
	work    chan int // slots handed to the submitters
	done    chan int // slots performed
	free    []int
	pending []int // prepared, not yet handed over
	dir     []int
	fd      []int // per slot: the request's file (several files per job)
	off     []uint64
	want    []uint64
	start   []int64
	issue   []int64
	end     []int64
	res     []int
	errs    []error
	flying  int
	wg      sync.WaitGroup
	// posix: ioengine=posixaio, glibc's POSIX AIO, which is this pool:
	// a request is issued when aio_read/aio_write hands it over (slat
	// ends there), and its clat includes the wait for a helper thread.
	posix bool
}

func (c *clone) runOffload() error {
	d := int(c.job.Iodepth)
	q := &offloadQueue{c: c, work: make(chan int, d), done: make(chan int, d), free: make([]int, 0, d),
		pending: make([]int, 0, d), dir: make([]int, d), fd: make([]int, d), off: make([]uint64, d), want: make([]uint64, d),
		start: make([]int64, d), issue: make([]int64, d), end: make([]int64, d), res: make([]int, d), errs: make([]error, d)}
	for i := d - 1; i >= 0; i-- {
		q.free = append(q.free, i)
	}
	threads := d
	if c.job.Ioengine == fiov1.IOEngine_IO_ENGINE_POSIXAIO && !c.job.SubmitOffload {
		// glibc's POSIX AIO queues the requests on one descriptor to one
		// helper thread, which performs them in order.
		q.posix, threads = true, 1
	}
	for i := 0; i < threads; i++ {
		q.wg.Go(q.submitter)
	}
	defer func() { close(q.work); q.wg.Wait() }()
	return c.drive(q)
}

// submitter is one thread of the pool.
func (q *offloadQueue) submitter() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := q.c
	var rng [2]uint64 // this thread's BLKDISCARD argument
	for slot := range q.work {
		buf := c.bufs.buf(slot, q.want[slot])
		if !q.posix {
			q.issue[slot] = c.now()
		}
		var n int
		var err error
		switch {
		case isNull(c.job):
			n = len(buf)
		case q.dir[slot] == dirTrim:
			n, err = c.trimWith(&rng, q.fd[slot], q.off[slot], q.want[slot])
		case q.dir[slot] == dirRead:
			n, err = unix.Pread(q.fd[slot], buf, int64(q.off[slot]))
		default:
			n, err = unix.Pwrite(q.fd[slot], buf, int64(q.off[slot]))
		}
		q.end[slot], q.res[slot], q.errs[slot] = c.now(), n, err
		q.done <- slot
	}
}

func (q *offloadQueue) inflight() int  { return q.flying }
func (q *offloadQueue) inflightN() int { return q.flying }

// fill prepares requests into the free slots. A sync, a rate wait and an
// overlap (serialize_overlap) first let what flies complete.
func (q *offloadQueue) fill() (bool, error) {
	c := q.c
	for len(q.free) > 0 && !c.latFull(len(q.start)-len(q.free)) {
		op, off, n := c.nextOp()
		switch op {
		case opDone:
			return true, nil
		case opBusy:
			return false, nil
		case opSync:
			if err := q.drain(); err != nil {
				return false, err
			}
			if err := c.doSync(); err != nil {
				return false, err
			}
			continue
		case opVerify, opThink, opPass:
			if err := q.drain(); err != nil {
				return false, err
			}
			if err := c.drained(op); err != nil {
				return false, err
			}
			continue
		}
		if c.rate.until > 0 {
			if err := q.drain(); err != nil {
				return false, err
			}
			c.pace()
		}
		for c.job.SerializeOverlap && q.overlaps(off, n) {
			if err := q.submit(); err != nil {
				return false, err
			}
			if err := q.reap(); err != nil {
				return false, err
			}
		}
		slot := q.free[len(q.free)-1]
		q.free = q.free[:len(q.free)-1]
		q.dir[slot], q.fd[slot], q.off[slot], q.want[slot], q.start[slot] = op, c.fd, off, n, c.now()
		if op == dirWrite {
			c.prepWrite(c.bufs.buf(slot, n), off)
		}
		q.pending = append(q.pending, slot)
	}
	return false, nil
}

// overlaps reports whether [off, off+n) overlaps a request prepared or in
// flight.
func (q *offloadQueue) overlaps(off, n uint64) bool {
	for slot := range q.dir {
		if q.isFree(slot) {
			continue
		}
		if q.fd[slot] == q.c.fd && off < q.off[slot]+q.want[slot] && q.off[slot] < off+n {
			return true
		}
	}
	return false
}

func (q *offloadQueue) isFree(slot int) bool {
	for _, f := range q.free {
		if f == slot {
			return true
		}
	}
	return false
}

// drain hands over what is prepared and waits for everything in flight.
func (q *offloadQueue) drain() error {
	if err := q.submit(); err != nil {
		return err
	}
	for q.flying > 0 {
		if err := q.reap(); err != nil {
			return err
		}
	}
	return nil
}

// submit hands the prepared requests to the pool (never blocks: at most
// iodepth requests exist).
func (q *offloadQueue) submit() error {
	c, n := q.c, len(q.pending)
	if n == 0 {
		return nil
	}
	now := c.now()
	for _, slot := range q.pending {
		if q.posix {
			q.issue[slot] = now
		}
		q.work <- slot
	}
	q.pending = q.pending[:0]
	q.flying += n
	if c.recording {
		c.st.level[levelIndex(q.flying)] += int64(n)
		c.st.submit[batchIndex(n)]++
		c.st.submits++
	}
	return nil
}

// reap waits for one completion and accounts it.
func (q *offloadQueue) reap() error {
	c := q.c
	slot := <-q.done
	q.flying--
	q.free = append(q.free, slot)
	if err := q.errs[slot]; err != nil {
		return c.ioFailed(q.dir[slot], q.off[slot], q.want[slot], err)
	}
	c.complete(q.dir[slot], q.start[slot], q.issue[slot], q.end[slot], int64(q.res[slot]), int64(q.want[slot]), q.off[slot], true)
	if q.dir[slot] == dirRead && c.checkReads {
		if err := c.checkRead(c.bufs.buf(slot, uint64(q.res[slot])), q.off[slot]); err != nil {
			return err
		}
	}
	if c.recording {
		c.st.complete[batchIndex(1)]++
		c.st.completes++
	}
	return nil
}
