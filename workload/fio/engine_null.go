package fio

import fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"

// isNull reports whether the job runs on fio's null engine: I/O that is
// accounted but never issued, and no file at all (fio's null engine is
// diskless).
func isNull(j *fiov1.Job) bool { return j.Ioengine == fiov1.IOEngine_IO_ENGINE_NULL }

// nullQueue is fio's null engine at iodepth > 1, as drive sees it: queue
// up to iodepth requests, "submit" them all at once (slat) and complete
// them all at the next reap, as fio's null_queue/null_commit/null_getevents
// do. At iodepth 1 the null engine completes each I/O at once (runSync).
type nullQueue struct {
	c       *clone
	depth   int
	start   []int64 // per queued request: ns since base when prepared
	issue   int64
	dir     []int
	want    []uint64
	off     []uint64
	queued  int
	flying  int
	stopped bool
}

func (c *clone) runNullQueue() error {
	d := int(c.job.Iodepth)
	q := &nullQueue{c: c, depth: d, start: make([]int64, d), dir: make([]int, d), want: make([]uint64, d), off: make([]uint64, d)}
	return c.drive(q)
}

func (q *nullQueue) fill() (bool, error) {
	c := q.c
	for q.queued+q.flying < q.depth && !c.latFull(q.queued+q.flying) {
		op, off, n := c.nextOp()
		switch op {
		case opDone:
			return true, nil
		case opBusy:
			return false, nil
		case opSync:
			start := c.now()
			c.lastWrite = false
			c.completeSync(start, c.now())
			continue
		case opThink:
			if err := q.submit(); err != nil {
				return false, err
			}
			if q.flying > 0 {
				if err := q.reap(); err != nil {
					return false, err
				}
			}
			c.think()
			continue
		}
		c.pace()
		i := q.flying + q.queued
		q.start[i], q.dir[i], q.want[i], q.off[i] = c.now(), op, n, off
		q.queued++
	}
	return false, nil
}

func (q *nullQueue) submit() error {
	if q.queued == 0 {
		return nil
	}
	c := q.c
	q.issue = c.now()
	q.flying += q.queued
	if c.recording {
		c.st.level[levelIndex(q.flying)] += int64(q.queued)
		c.st.submit[batchIndex(q.queued)]++
		c.st.submits++
	}
	q.queued = 0
	return nil
}

func (q *nullQueue) reap() error {
	c := q.c
	now := c.now()
	for i := 0; i < q.flying; i++ {
		c.complete(q.dir[i], q.start[i], q.issue, now, int64(q.want[i]), int64(q.want[i]), q.off[i], true)
	}
	if c.recording {
		c.st.complete[batchIndex(q.flying)]++
		c.st.completes++
	}
	q.flying = 0
	return nil
}

func (q *nullQueue) inflight() int { return q.flying }
