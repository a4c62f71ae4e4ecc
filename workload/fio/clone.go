package fio

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// Next-operation kinds; dirRead and dirWrite double as op values.
const (
	opSync   = 3
	opDone   = 4
	opVerify = 5 // verify_backlog: read back the blocks written since the last one
	opThink  = 6 // thinktime: let what flies complete, then wait
	// opBusy: the file whose turn it is cannot be opened now (openfiles=
	// are open): what flies may complete, then the choice is made again,
	// as fio's -EBUSY from get_next_file
	opBusy = 7
	// opPass: a loop is over and unlink_each_loop=1 removes the files:
	// what flies completes first, as fio's loop ends once its I/O is in
	opPass = 8
)

// clone is one running copy of a job (numjobs makes several). All of its
// state is owned by the one goroutine that runs it; nothing here is shared
// on the per-I/O path except the stop flag (read-only there).
type clone struct {
	job    *fiov1.Job
	num    int          // clone number within the job
	index  int          // position among all clones (fio's job order)
	file   beneath.Path // the guard's resolved file: opened, laid out
	path   string       // file.String(), for messages
	size   uint64       // bytes of the region
	offset uint64       // where the region starts (offset=)
	// files are the clone's files (one, or nrfiles / filename=a:b); file,
	// path, size, offset, fd and gen are the current one's (use), so the
	// engines see one file at a time. fsv chooses among several.
	files []*cfile
	fsv   fileService
	// fileErr is why a file could not be opened when its turn came (the
	// clone then stops, as fio's job does).
	fileErr error
	// passGranted: the loop's end was drained (opPass) and the next may
	// begin.
	passGranted bool
	seed        uint64
	dev         device
	fd          int
	gen         *generator
	bufs        *buffers
	st          *jobStats
	h           [4]*workload.Handle // read, write, trim, sync; nil when unused
	// bytes count read, written and trimmed bytes per interval (MB/s in
	// the fabric).
	bytes [nDirs]*workload.Counter
	stop  *atomic.Bool
	// quit is raised for this clone alone (exitall of another job).
	quit atomic.Bool
	// started is set when the clone begins its I/O (exit_what=stonewall
	// stops the clones running then).
	started atomic.Bool
	base    time.Time
	err     error
	// deps must finish before the clone starts (stonewall, wait_for); done
	// is closed when it has.
	deps  []*clone
	done  chan struct{}
	notes []string // layout notes, for the report
	// fiolog prints what fio logs while the job runs (nil: nothing).
	fiolog *fioLog
	// logs are the job's fio log files (nil when not written); logging
	// says whether any is, so the hot path checks one bool.
	logs    [logKinds]*lineLog
	hist    *clatHist
	logging bool
	env     workload.Env
	// verify is set with verify=; checkReads: a job that only reads
	// checks each block it reads.
	verify     *verifier
	checkReads bool
	// fill is how write buffers are filled; fillRand, set with
	// refill_buffers, refills a buffer before each write.
	bufFill  bufferFill
	fillRand *rand.Rand

	// mm is the clone's region mapped for ioengine=mmap, from file offset
	// mmBase.
	mm     []byte
	mmBase uint64
	// qd is how the queueing engines batch submissions and completions.
	qd depths

	recording    bool
	rampEnd      int64 // ns since base
	endAt        int64 // ns since base; 0 = no runtime limit
	recStart     int64
	replay       *replay      // read_iolog: the log's entries instead of the generator's
	status       *cloneStatus // --status-interval: copies of the counts, when asked
	lastSample   int64
	nextSample   int64
	nextYield    int64
	usage0       threadUsage
	writesIssued uint64
	lastWrite    bool
	ios          uint64 // reads and writes issued (number_ios)
	number       uint64 // number_ios; 0 = no limit
	// asyncSync: syncs fly in the ring (io_uring), and whether one is due
	// follows fio's rule as it plays out there: the writes issued are a
	// multiple of N and the last request to complete was not a sync
	// (lastWasSync). fio checks it before every request, so until a sync
	// completes it queues another after the same write; its io_uring runs
	// of fsync=4 show 0.8 syncs per write, and so do these.
	asyncSync   bool
	lastWasSync bool
	loopsLeft   uint32
	rate        rateState
	flows       *flows // the run's flow groups (flow_id)
	flow        flowState
	fsyncEvery  uint64        // fsync=N; 0 = never
	fdsyncEvery uint64        // fdatasync=N; 0 = never
	datasync    bool          // the sync now due is an fdatasync
	iov         [1]unix.Iovec // pvsync's vector, preallocated
	// prio is set with cmdprio options (libaio, io_uring); prioIdx is the
	// priority index of the I/O being completed (0: the job's own).
	prio    *cmdPrio
	prioIdx uint8
	// prioH are, with cmdprio, a direction's handles by priority index
	// (see attachHandles); nil without.
	prioH [nDirs][]*workload.Handle
	// trimRange is BLKDISCARD's argument, kept here so that passing it to
	// the kernel allocates nothing.
	trimRange [2]uint64
	// iolog is fio's write_iolog (nil without); lastOff is the offset a
	// sync is logged with (fio logs the io_u's last one).
	iolog   *ioLog
	lastOff uint64
	// lastThink is the I/O count at the last thinktime pause.
	lastThink uint64
	// lat is latency_target's search (nil without); checkLat is set with
	// it or max_latency, so the per-I/O path tests one bool. fatal is
	// the error that stops the job (a latency over max_latency).
	lat      *latTarget
	checkLat bool
	fatal    error
	filled   bool // fill_device: the space ran out
	rec      *workload.Recorder
}

// now is the time since the clone's clock origin, in ns (monotonic).
func (c *clone) now() int64 { return int64(time.Since(c.base)) }

// begin sets the clone's clock up at the start of its I/O.
func (c *clone) begin() {
	j := c.job
	c.base = time.Now()
	c.rampEnd = j.RampTimeNs
	if j.RuntimeNs > 0 {
		c.endAt = c.rampEnd + j.RuntimeNs
	}
	c.loopsLeft = j.Loops
	c.setupRate()
	c.fsyncEvery, c.fdsyncEvery = uint64(j.Fsync), uint64(j.Fdatasync)
	c.lat = newLatTarget(j)
	c.checkLat = c.lat != nil || slices.ContainsFunc(j.MaxLatencyNs, func(n uint64) bool { return n > 0 })
	c.tick(0)
}

// tick runs the clock's periodic duties (end of ramp, bandwidth samples)
// and reports whether the clone must stop issuing I/O.
func (c *clone) tick(now int64) bool {
	if !c.recording && now >= c.rampEnd {
		c.recording, c.recStart, c.lastSample = true, now, now
		c.nextSample = now + int64(sampleWindow)
		c.usage0 = readThreadUsage()
	}
	if c.recording && now >= c.nextSample {
		c.sample(now)
	}
	if now >= c.nextYield {
		c.yield(now)
	}
	return c.stop.Load() || c.quit.Load() || (c.endAt > 0 && now >= c.endAt) || (c.rate.minOn && c.checkMinRate(now)) ||
		c.fatal != nil || c.lat != nil && c.lat.done || c.filled
}

// yieldEvery is how often a clone passes through the Go scheduler. A
// goroutine that only makes system calls never does, so after 10 ms the
// runtime's sysmon forcibly retakes its P in mid-syscall, and each retake
// keeps sysmon polling every 20 µs: measurable CPU per I/O that fio does
// not spend. Yielding well within 10 ms keeps sysmon asleep.
const yieldEvery = 5 * time.Millisecond

func (c *clone) yield(now int64) {
	if c.status != nil && c.status.want.Load() {
		c.publish(now)
	}
	runtime.Gosched()
	c.nextYield = now + int64(yieldEvery)
}

// sample closes a bandwidth/IOPS window, as fio's add_bw_samples.
func (c *clone) sample(now int64) {
	secs := float64(now-c.lastSample) / 1e9
	for d := range c.st.dir {
		if !c.does(d) || c.job.DisableBw {
			continue
		}
		ds := &c.st.dir[d]
		ds.bw.add(float64(ds.winBytes) / 1024 / secs)
		ds.iops.add(float64(ds.winIOs) / secs)
		ds.winBytes, ds.winIOs = 0, 0
	}
	c.lastSample = now
	c.nextSample += int64(sampleWindow)
	if c.nextSample <= now {
		c.nextSample = now + int64(sampleWindow)
	}
}

// does reports whether the job issues I/O in direction d.
func (c *clone) does(d int) bool { return c.gen.does(d) }

// finish closes the measurement.
func (c *clone) finish() {
	now := c.now()
	if !c.recording {
		return
	}
	// Like fio, the run lasts until the deadline: the requests still in
	// flight then are completed and counted, but their drain is not
	// runtime (fio reports 15001 ms for runtime=15).
	if c.endAt > 0 && now > c.endAt {
		now = c.endAt
	}
	c.st.runtime = time.Duration(now - c.recStart)
	if c.st.runtime < time.Millisecond {
		c.st.runtime = time.Millisecond // fio never reports a 0 msec run that did I/O
	}
	c.st.wall = c.st.runtime
	c.st.latDepth = c.latencyDepth()
	c.st.usage = readThreadUsage().sub(c.usage0)
}

// nextOp decides the next operation and, for reads and writes, its offset
// and length.
func (c *clone) nextOp() (op int, off, n uint64) {
	if c.replay != nil {
		return c.nextReplay()
	}
	if len(c.files) > 1 {
		return c.nextOpFiles()
	}
	// fio leaves its loop once the last block is issued, before the sync
	// that would follow it (256 writes with fsync=4 give 63 syncs).
	if !c.job.TimeBased && c.loopsLeft <= 1 && c.gen.done() {
		return opDone, 0, 0
	}
	if c.number > 0 && c.ios >= c.number {
		return opDone, 0, 0
	}
	if c.flow.group != nil && !c.waitFlow() {
		return opDone, 0, 0
	}
	if c.syncDue() {
		if c.iolog != nil {
			c.iolog.io(c.now(), syncLogName(c.datasync), c.lastOff, 0)
		}
		return opSync, 0, 0
	}
	if c.verify != nil && c.verify.backlogDue() {
		return opVerify, 0, 0
	}
	if c.job.ThinktimeNs > 0 && c.ios >= c.lastThink+uint64(max(c.job.ThinktimeBlocks, 1)) {
		c.lastThink = c.ios
		return opThink, 0, 0
	}
	d := c.gen.dir()
	if c.rate.on {
		d = c.rateDir(d)
	}
	off, n, ok := c.gen.next(d)
	if !ok {
		if !c.job.TimeBased {
			if c.loopsLeft <= 1 {
				return opDone, 0, 0
			}
			if c.job.UnlinkEachLoop && !isNull(c.job) && !c.passGranted {
				c.passGranted = true
				return opPass, 0, 0
			}
			c.passGranted = false
			c.loopsLeft--
			if c.iolog != nil {
				// fio closes and reopens the job's files between loops
				now := c.now()
				c.iolog.file(now, "close")
				c.iolog.file(now, "open")
			}
		}
		c.gen.restart()
		if off, n, ok = c.gen.next(d); !ok {
			return opDone, 0, 0
		}
	}
	c.ios++
	c.gen.issuedIn(d)
	if c.rate.on {
		c.issuedRate(d, n)
	}
	if c.iolog != nil {
		c.iolog.io(c.now(), ioLogNames[d], off, n)
		c.lastOff = off
	}
	c.lastWrite = d == dirWrite
	if c.lastWrite {
		c.writesIssued++
	}
	return d, off, n
}

// prepWrite readies a write buffer: new contents with refill_buffers,
// verify headers with verify=.
func (c *clone) prepWrite(buf []byte, off uint64) {
	if c.fillRand != nil {
		c.bufFill.fill(buf, c.fillRand)
	}
	if c.verify != nil {
		c.verify.stamp(buf, off, off-c.offset)
	}
}

// checkRead verifies a block a read-only job read (verify=).
func (c *clone) checkRead(buf []byte, off uint64) error {
	if !c.checkReads {
		return nil
	}
	if err := c.verify.check(buf, off); err != nil {
		return fmt.Errorf("job %s: %w", c.job.Name, err)
	}
	return nil
}

// syncDue applies fio's rule: right after a write, when the writes issued
// so far are a multiple of fsync=N a fsync is due, else when they are a
// multiple of fdatasync=N a fdatasync.
func (c *clone) syncDue() bool {
	if c.asyncSync {
		if c.lastWasSync || c.writesIssued == 0 {
			return false
		}
	} else if !c.lastWrite {
		return false
	}
	switch {
	case c.fsyncEvery > 0 && c.writesIssued%c.fsyncEvery == 0:
		c.datasync = false
	case c.fdsyncEvery > 0 && c.writesIssued%c.fdsyncEvery == 0:
		c.datasync = true
	default:
		return false
	}
	return true
}

// doSync issues the blocking fsync/fdatasync that fsync=N asks for, and
// records its latency.
func (c *clone) doSync() error {
	start := c.now()
	var err error
	if isNull(c.job) {
		// fio's null engine completes syncs without a system call.
	} else if c.mm != nil {
		err = unix.Msync(c.mm, unix.MS_SYNC) // fio's mmap engine, for fsync and fdatasync alike
	} else if c.datasync {
		err = unix.Fdatasync(c.fd)
	} else {
		err = unix.Fsync(c.fd)
	}
	end := c.now()
	c.lastWrite = false
	if err != nil {
		return c.syncError(err)
	}
	c.completeSync(start, end)
	return nil
}

func (c *clone) syncError(err error) error {
	return fmt.Errorf("job %s: sync %s: %w", c.job.Name, c.path, err)
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drained does what an opVerify or opThink asks once the queue is empty:
// the blocks written since the last check are read back, or the job
// pauses. The queued engines call it after draining what flies.
func (c *clone) drained(op int) error {
	if op == opThink {
		c.think()
		return nil
	}
	if op == opPass {
		return c.unlinkFiles()
	}
	return c.verifyBacklog()
}

// think is fio's thinktime pause, once what flies has completed: spin
// thinktime_spin, then sleep the rest of thinktime (or until stopped).
func (c *clone) think() {
	j := c.job
	spin := min(j.ThinktimeSpinNs, j.ThinktimeNs)
	for end := c.now() + spin; c.now() < end; {
	}
	if rest := time.Duration(j.ThinktimeNs - spin); rest > 0 && !c.stop.Load() {
		time.Sleep(rest)
	}
}
