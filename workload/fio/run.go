package fio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// plan expands jobs into clones (numjobs) on the paths the guard resolved
// (resolvePaths), fixes seeds and checks everything that can be checked
// before any I/O: sizes of named files, tmpfs, O_DIRECT alignment.
func plan(spec *fiov1.Spec, env workload.Env) ([]*clone, []string, error) {
	paths, err := resolvePaths(spec, env)
	if err != nil {
		return nil, nil, err
	}
	var (
		clones []*clone
		notes  []string
		errs   []error
	)
	byName := map[string][]*clone{}
	fl := &flows{}
	for i, j := range spec.Jobs {
		first := len(clones)
		for n, cp := range paths[i] {
			c, err := planClone(j, n, len(clones), cp, env)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			c.flows = fl
			if j.Stonewall && i > 0 {
				c.deps = append(c.deps, clones[:first]...)
			}
			if j.WaitFor != "" {
				c.deps = append(c.deps, byName[j.WaitFor]...)
			}
			clones = append(clones, c)
		}
		byName[j.Name] = append(byName[j.Name], clones[first:]...)
	}
	return clones, notes, errors.Join(errs...)
}

func planClone(j *fiov1.Job, num, index int, cp clonePaths, env workload.Env) (*clone, error) {
	dir := cp.dir
	c := &clone{job: j, num: num, index: index, file: cp.files[0], path: cp.files[0].String(), size: j.Size, fd: -1,
		seed: cloneSeed(j.Randseed, index, env.Shard), st: newCloneStats(), number: j.NumberIos, offset: cloneOffset(j, num), env: env,
		qd: depthsOf(j)}
	if len(cp.files) > 1 {
		if err := planFiles(c, cp.files, index+1); err != nil {
			return nil, err
		}
	} else if err := planOneFile(c, j, index); err != nil {
		return nil, err
	}
	c.dev = deviceOf(dir)
	if j.Direct && !isNull(j) {
		if isTmpfs(dir) {
			return nil, fmt.Errorf("job %s: direct=1 on %s: %w (tmpfs); use direct=0 or a disk-backed directory", j.Name, dir, ErrDirectUnsupported)
		}
		if err := checkAlignment(j, c.dev); err != nil {
			return nil, err
		}
	}
	if j.ReadIolog != "" {
		c.replay = newReplay(j)
	}
	return c, nil
}

// planOneFile sizes a clone's one file and gives it its generator.
func planOneFile(c *clone, j *fiov1.Job, index int) error {
	path := c.path
	var limit uint64 // size= below the file's region: the bytes per loop
	if j.Filesize > 0 && j.SizePercent == 0 {
		// as setup_files: the file's size less offset= (a file already
		// within the range keeps its own), drawn for a range
		real := int64(-1)
		if st, err := c.file.Stat(); err == nil {
			real = st.Size
		}
		sizeSeed := c.seed ^ 0x5eed5
		if j.Randrepeat {
			sizeSeed = fioSeed(j.Randseed, index+1, fioRandFileSizeOff)
		}
		regions, lim, err := fileRegions(j, c.offset, []int64{real}, newTaus88(uint32(sizeSeed)).next)
		if err != nil {
			return err
		}
		c.size, limit = regions[0].size, lim
	}
	if j.SizePercent > 0 || j.OffsetPercent > 0 {
		if err := resolvePercent(c); err != nil {
			return err
		}
	}
	if c.size == 0 && j.FillDevice && !isNull(j) {
		n, err := fillSize(c)
		if err != nil {
			return err
		}
		c.size = n
	}
	if c.size == 0 && isNull(j) {
		return fmt.Errorf("job %s: the null engine needs size=", j.Name)
	}
	if c.size == 0 {
		// fio's setup_files: no size= takes the file's (or device's)
		real, err := realSize(c.file)
		switch {
		case err != nil:
			return sizeNeeded(j, path, "does not exist")
		case real == 0:
			return sizeNeeded(j, path, "is empty")
		case real <= c.offset:
			return fmt.Errorf("job %s: size= not given and %s has no data past offset=%d", j.Name, path, c.offset)
		}
		c.size = real - c.offset
	}
	c.gen = newGenerator(j, c.offset, c.size, c.seed)
	if j.IoSize == 0 && limit > 0 && limit < c.size {
		c.gen.limit = limit
	}
	mixSeed := c.seed
	if j.Randrepeat {
		mixSeed = fioSeed(j.Randseed, index+1, fioRandMixOff)
	}
	c.gen.useFioMix(mixSeed)
	c.files = []*cfile{{file: c.file, path: c.path, fd: -1, offset: c.offset, size: c.size, gen: c.gen}}
	return nil
}

// sizeNeeded is fio 3.33's error (setup_files, then EINVAL) for a job
// without size= whose files do not exist or hold nothing: its line
// first, so scripts matching it match ours, then which file and why.
func sizeNeeded(j *fiov1.Job, path, why string) error {
	return fmt.Errorf("%s: you need to specify size= (%w: %s %s, and the job has no size= to lay it out with)", j.Name, ErrInvalidValue, path, why)
}

// cloneOffset is where clone num's region starts: offset= plus num times
// offset_increment=, as fio's subjobs.
func cloneOffset(j *fiov1.Job, num int) uint64 {
	return j.Offset + uint64(num)*j.OffsetIncrement
}

// resolvePercent turns size=N% / offset=N% into bytes of the file's (or
// device's) real size, as fio does when it sets the file up.
func resolvePercent(c *clone) error {
	j := c.job
	real, err := realSize(c.file)
	if err != nil {
		return fmt.Errorf("job %s: size=%d%%/offset=%d%% need an existing file or device: %w", j.Name, j.SizePercent, j.OffsetPercent, err)
	}
	bs := max(min(j.GetReadBs().GetMin(), j.GetWriteBs().GetMin()), 1)
	off := j.Offset
	if j.OffsetPercent > 0 {
		off = real * uint64(j.OffsetPercent) / 100 / bs * bs
	}
	size := c.size
	if j.SizePercent > 0 {
		size = real * uint64(j.SizePercent) / 100 / bs * bs
	}
	if off+size > real {
		size = (real - min(off, real)) / bs * bs
	}
	if size == 0 {
		return fmt.Errorf("job %s: %d%% of %s (%d bytes) is less than one block", j.Name, j.SizePercent, c.path, real)
	}
	c.size, c.offset = size, off
	return nil
}

// realSize is a file's size, or a block device's capacity.
func realSize(path beneath.Path) (uint64, error) {
	st, err := path.Stat()
	if err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return uint64(st.Size), nil
	}
	fd, err := path.Open(unix.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return unix.IoctlGetUint64(fd, unix.BLKGETSIZE64)
}

// checkAlignment refuses a block size, alignment or offset that O_DIRECT
// cannot use on dev.
func checkAlignment(j *fiov1.Job, dev device) error {
	name := dev.name
	if name == "" {
		name = "the device"
	}
	sizes := []uint64{j.Bs}
	for _, b := range []*fiov1.BlockSizes{j.ReadBs, j.WriteBs} {
		sizes = append(sizes, b.GetMin(), b.GetMax(), b.GetAlign())
		for _, s := range b.GetSplit() {
			sizes = append(sizes, s.Bs)
		}
	}
	for _, n := range sizes {
		if n%dev.lbs != 0 {
			return fmt.Errorf("job %s: bs=%d is not a multiple of the logical block size of %s (%d bytes): %w",
				j.Name, n, name, dev.lbs, ErrAlignment)
		}
	}
	if j.Offset%dev.lbs != 0 {
		return fmt.Errorf("job %s: offset=%d is not a multiple of the logical block size of %s (%d bytes): %w",
			j.Name, j.Offset, name, dev.lbs, ErrAlignment)
	}
	return nil
}

// cloneSeed derives a clone's seed from the job's, its position and, when
// the phase runs on several workers, the worker's shard, so that clones
// and workers do not repeat each other's offsets (splitmix64 finaliser).
func cloneSeed(seed uint64, index int, sh workload.Shard) uint64 {
	z := seed + uint64(index+1)*0x9e3779b97f4a7c15
	if sh.Count > 1 {
		z += uint64(sh.Index+1) * 0xbf58476d1ce4e5b9
	}
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// execute lays the files out, opens them, runs every clone on its own
// locked OS thread and gathers the result. Jobs in sequence (stonewall,
// wait_for) lay their files out when their turn comes, as fio's threads
// set their files up when they start, so a job sees what the jobs before
// it left.
func execute(ctx context.Context, clones []*clone, notes []string, env workload.Env, rec *workload.Recorder, w *Workload) (*result, error) {
	log := env.Logger()
	if w != nil {
		for _, c := range clones {
			c.fiolog = w.log
		}
	}
	for _, n := range notes {
		log.Info(n)
	}
	defer closeAll(clones)
	// Every file is laid out before any is opened: a later job's layout
	// may replace a file an earlier job shares (a larger region).
	for _, c := range clones {
		if len(c.deps) == 0 {
			if err := layoutFile(ctx, c, log); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range clones {
		if len(c.deps) == 0 {
			if err := openAndAttach(c, rec); err != nil {
				return nil, err
			}
		}
	}
	// Every worker of the phase starts its I/O at env.Start, so that
	// interval k covers the same slice of time on all of them; a layout
	// that overran the start margin starts at once.
	if err := sleepCtx(ctx, time.Until(env.Start)); err != nil {
		return nil, err
	}
	res := &result{start: time.Now(), clones: clones, headed: -1}
	if out := w.headerOut(); out != nil {
		// fio prints the header before the jobs run (here with the layout's
		// lines, which fio prints just after it).
		shown := append([]string(nil), notes...)
		for _, c := range clones {
			shown = append(shown, c.notes...)
		}
		writeHeader(out, w, clones, env.Version, shown)
		res.headed = len(shown)
	}
	devs := map[string]bool{}
	for _, c := range clones {
		if c.dev.name != "" && !isNull(c.job) {
			devs[c.dev.name] = true
		}
	}
	before := readDiskStats(devs)
	defer enoughProcs(len(clones))()
	var st *statusRun
	if w != nil && w.status != nil {
		st = startStatus(w.status, w, clones, rec, res.start, env.Version, notes)
	}
	merr := measure(ctx, clones, rec, log, res.start, st)
	res.elapsed = time.Since(res.start)
	res.disks = diskDelta(before, readDiskStats(devs), res.elapsed)
	res.notes = notes
	errs := []error{merr}
	for _, c := range clones {
		res.notes = append(res.notes, c.notes...)
		errs = append(errs, c.err)
	}
	return res, errors.Join(errs...)
}

// prepare lays out and opens a clone's file and gives it its handles.
func prepare(ctx context.Context, c *clone, rec *workload.Recorder, log *slog.Logger) error {
	if err := layoutFile(ctx, c, log); err != nil {
		return err
	}
	return openAndAttach(c, rec)
}

// layoutFile lays the clone's file out (nothing for the null engine).
func layoutFile(ctx context.Context, c *clone, log *slog.Logger) error {
	if isNull(c.job) {
		return nil
	}
	ln, err := layout(ctx, c)
	for _, n := range ln {
		log.Info(n)
	}
	c.notes = append(c.notes, ln...)
	return err
}

// openAndAttach opens the clone's file, logs and verifier, and gives it
// its handles.
func openAndAttach(c *clone, rec *workload.Recorder) error {
	c.rec = rec
	if err := openClone(c); err != nil {
		return err
	}
	if c.job.Verify != fiov1.Verify_VERIFY_NONE && c.job.Verify != fiov1.Verify_VERIFY_UNSPECIFIED {
		v, err := newVerifier(c)
		if err != nil {
			return err
		}
		c.verify, c.checkReads = v, !c.does(dirWrite)
	}
	p, err := newCmdPrio(c.job, c.seed, c.does)
	if err != nil {
		return fmt.Errorf("job %s: %w", c.job.Name, err)
	}
	if p != nil {
		c.prio = p
		for d := range p.prios {
			c.st.dir[d].prio = prioStats(p.prios[d])
		}
	}
	if c.job.WriteIolog != "" {
		if err := openIOLog(c); err != nil {
			return err
		}
	}
	if wantsLogs(c.job) {
		if err := openLogs(c, c.env.Path, c.num == 0 || c.job.Logs.PerJob); err != nil {
			return err
		}
		c.logging = true
	}
	attachHandles(c, rec)
	return nil
}

// enoughProcs raises GOMAXPROCS to one P per clone plus one for the rest
// of the process, and returns how to put it back. Each clone holds a locked
// OS thread that spends most of its time blocked in I/O system calls; with
// fewer Ps than clones, sysmon hands the P of a thread in a syscall to
// another thread after 20 µs and the returning thread must wait for one:
// futex wake-ups, context switches and latency on every I/O, which fio's
// plain threads do not pay. Idle Ps cost nothing. GOMAXPROCS is process
// wide, so it is only ever raised, and restored when the run ends.
func enoughProcs(clones int) (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	if prev >= clones+1 {
		return func() {}
	}
	runtime.GOMAXPROCS(clones + 1)
	return func() { runtime.GOMAXPROCS(prev) }
}

// runClones starts every clone and waits for all of them; a clone with
// dependencies (stonewall, wait_for) starts once they are done. A
// cancelled ctx raises the stop flag each clone checks once per I/O batch.
func runClones(ctx context.Context, clones []*clone, rec *workload.Recorder, log *slog.Logger) {
	stop := &atomic.Bool{}
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	var wg sync.WaitGroup
	for _, c := range clones {
		c.stop = stop
		if c.done == nil { // startStatus may have made it, to watch it
			c.done = make(chan struct{})
		}
	}
	for _, c := range clones {
		wg.Go(func() {
			defer close(c.done)
			defer exitAllAfter(c, clones)
			c.err = c.waitAndRun(ctx, rec, log)
			if c.err != nil {
				log.Error("job failed", "job", c.job.Name, "clone", c.num, "err", c.err)
				c.fiolog.jobEnded(c.err)
			}
		})
	}
	wg.Wait()
}

// exitAllAfter is fio's exitall: once c's job is done, the clones
// exit_what names stop (its group's, those running, or all).
func exitAllAfter(c *clone, clones []*clone) {
	if !c.job.Exitall {
		return
	}
	for _, o := range clones {
		switch {
		case o == c:
		case c.job.ExitWhat == exitAll:
			o.quit.Store(true)
		case c.job.ExitWhat == exitRunning && o.started.Load():
			o.quit.Store(true)
		case c.job.ExitWhat == exitGroup && o.job.Group == c.job.Group:
			o.quit.Store(true)
		}
	}
}

// waitAndRun waits for the clone's dependencies, prepares it if that was
// left for its turn, and runs it.
func (c *clone) waitAndRun(ctx context.Context, rec *workload.Recorder, log *slog.Logger) error {
	if len(c.deps) == 0 {
		return c.run(ctx)
	}
	for _, d := range c.deps {
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil
		}
	}
	if c.stop.Load() || c.quit.Load() {
		return nil
	}
	if err := prepare(ctx, c, rec, log); err != nil {
		return err
	}
	return c.run(ctx)
}

// run is one clone's life on its own OS thread (so that RUSAGE_THREAD is
// the clone's CPU, and blocking I/O does not hop threads).
func (c *clone) run(ctx context.Context) error {
	runtime.LockOSThread()
	// A thread given the job's CPU set or I/O priority is not handed back
	// to the runtime: it ends with the clone's goroutine, so nothing else
	// runs with them.
	if len(c.job.CpusAllowed) == 0 && !c.job.IoprioSet {
		defer runtime.UnlockOSThread()
	}
	if len(c.job.CpusAllowed) > 0 {
		// The thread ends with the goroutine, but the runtime may start
		// a thread from it as it exits (handing its P on), and a thread
		// inherits its creator's CPU set: seen as one of the Go runtime's
		// threads left pinned to a job's CPUs after the run. So the set
		// is given back before the goroutine ends.
		var orig unix.CPUSet
		if unix.SchedGetaffinity(0, &orig) == nil {
			defer unix.SchedSetaffinity(0, &orig)
		}
		var set unix.CPUSet
		for _, cpu := range cloneCPUs(c.job, c.index) {
			set.Set(int(cpu))
		}
		// fio's cpus_allowed: this clone's thread runs on these CPUs only.
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("job %s: cpus_allowed: %w", c.job.Name, err)
		}
	}
	// The I/O priority is inherited the same way: given back too.
	if restore, err := setJobIOPrio(c.job); err != nil {
		return err
	} else if restore != nil {
		defer restore()
	}
	if err := sleepCtx(ctx, time.Duration(c.job.StartdelayNs)); err != nil {
		return nil
	}
	c.started.Store(true)
	c.begin()
	c.joinFlow()
	var err error
	switch {
	case c.job.SubmitOffload || c.job.Ioengine == fiov1.IOEngine_IO_ENGINE_POSIXAIO:
		err = c.runOffload()
	case c.job.Ioengine == fiov1.IOEngine_IO_ENGINE_NULL:
		if c.job.Iodepth > 1 {
			err = c.runNullQueue()
		} else {
			err = c.runSync()
		}
	case c.job.Ioengine == fiov1.IOEngine_IO_ENGINE_LIBAIO:
		err = c.runAIO()
	case c.job.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING:
		err = c.runUring()
	default:
		err = c.runSync()
	}
	c.leaveFlow()
	if err == nil {
		err = c.fileErr
	}
	if err == nil {
		err = c.rate.err
	}
	if err == nil {
		err = c.fatal
	}
	if err == nil && c.job.EndFsync && c.does(dirWrite) {
		err = c.endFsyncFiles()
	}
	if err == nil && c.verify != nil && c.job.DoVerify && c.does(dirWrite) {
		err = c.verifyPass()
	}
	if err == nil && !c.verifyContinues() {
		err = c.verify.result(c.job.Name)
	}
	c.finish()
	if cerr := c.closeFile(); err == nil {
		err = cerr
	}
	if lerr := c.closeLogs(); err == nil {
		err = lerr
	}
	if c.iolog != nil {
		if lerr := c.closeIOLog(); err == nil {
			err = lerr
		}
	}
	return err
}

// closeIOLog logs every file's close and writes the I/O log out.
func (c *clone) closeIOLog() error {
	now := c.now()
	if len(c.files) > 1 {
		// the files still open close now; the log's own close ends it
		var last *cfile
		for _, f := range c.files {
			if f.open {
				if last != nil {
					c.closeTurn(last)
				}
				last = f
			}
		}
		if last == nil {
			return c.iolog.closeQuiet()
		}
		c.iolog.name = ioLogName(last.path)
	}
	err := c.iolog.close(now)
	c.iolog = nil
	return err
}

// openClone opens the clone's file with the job's flags and allocates its
// buffers.
func openClone(c *clone) error {
	j := c.job
	c.bufFill = bufferFill{pattern: j.BufferPattern, zero: j.ZeroBuffers, compress: uint64(j.BufferCompressPercentage), chunk: int(j.BufferCompressChunk)}
	// reads land in the buffers writes are sent from: with a pattern
	// the buffers are refilled before each write, as fio does
	if j.RefillBuffers || len(j.BufferPattern) > 0 && c.does(dirRead) {
		c.fillRand = rand.New(rand.NewPCG(c.seed, 0xf111))
	}
	if isNull(j) {
		depth := 1
		if j.SubmitOffload {
			depth = int(j.Iodepth)
		}
		var err error
		c.bufs, err = newBuffers(depth, j.Bs, c.seed, c.bufFill)
		return err
	}
	// A job with several files opens each when its turn first comes, as
	// fio's get_next_file (create_on_open makes it then).
	if len(c.files) == 1 {
		if err := c.openFD(c.files[0]); err != nil {
			return err
		}
	}
	c.use(0)
	if isMmap(j) {
		if err := c.mapFile(); err != nil {
			return err
		}
	}
	depth := 1
	if j.Ioengine == fiov1.IOEngine_IO_ENGINE_LIBAIO || j.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING || j.SubmitOffload ||
		j.Ioengine == fiov1.IOEngine_IO_ENGINE_POSIXAIO {
		depth = int(j.Iodepth)
	}
	var err error
	c.bufs, err = newBuffers(depth, j.Bs, c.seed, c.bufFill)
	if err != nil {
		return fmt.Errorf("job %s: %w", j.Name, err)
	}
	return nil
}

// openFD opens one of the clone's files with the job's flags.
func (c *clone) openFD(f *cfile) error {
	j := c.job
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	if c.does(dirWrite) || c.does(dirTrim) { // BLKDISCARD needs the device open for writing
		flags = unix.O_RDWR | unix.O_CLOEXEC
	}
	if j.Direct {
		flags |= unix.O_DIRECT
	}
	switch j.Sync {
	case fiov1.SyncMode_SYNC_MODE_SYNC:
		flags |= unix.O_SYNC
	case fiov1.SyncMode_SYNC_MODE_DSYNC:
		flags |= unix.O_DSYNC
	}
	if (j.CreateOnOpen || j.UnlinkEachLoop) && c.does(dirWrite) {
		// nothing was laid out (create_on_open), or the last loop removed
		// the file: it is made now, as fio's open of a job that writes
		flags |= unix.O_CREAT
	}
	fd, err := f.file.Open(flags, 0o644)
	if err != nil {
		if j.Direct && err == unix.EINVAL {
			return fmt.Errorf("job %s: open %s with O_DIRECT: %w", j.Name, f.path, ErrDirectUnsupported)
		}
		return fmt.Errorf("job %s: open %s: %w", j.Name, f.path, err)
	}
	f.fd = fd
	if !j.Direct && j.Invalidate {
		// fio's invalidate=1: start buffered jobs from a cold page cache.
		_ = unix.Fadvise(fd, int64(f.offset), int64(f.size), unix.FADV_DONTNEED)
	}
	return nil
}

func closeAll(clones []*clone) {
	for _, c := range clones {
		_ = c.closeLogs()
		if c.iolog != nil {
			_ = c.closeIOLog()
		}
		c.closeFile()
		c.bufs.close()
	}
}

// closeFile closes the clone's files once (fsync_on_close first) and
// removes them with unlink=1, as fio does when a job's files are closed.
func (c *clone) closeFile() error {
	var err error
	for _, f := range c.files {
		if ferr := c.closeOne(f, c.job.Unlink); err == nil {
			err = ferr
		}
	}
	if len(c.files) == 0 { // a clone that never got its files planned
		return nil
	}
	c.fd = -1
	return err
}

// closeOne closes one file (fsync_on_close first) and, with unlink,
// removes it (of a job with several files that ran, one whose
// descriptor is closed already or was never opened too).
func (c *clone) closeOne(f *cfile, unlink bool) error {
	if f.fd < 0 {
		if unlink && !isNull(c.job) && c.started.Load() && len(c.files) > 1 {
			if uerr := f.file.Remove(); uerr != nil && !errors.Is(uerr, fs.ErrNotExist) {
				return fmt.Errorf("job %s: unlink %s: %w", c.job.Name, f.path, uerr)
			}
		}
		return nil
	}
	var err error
	if c.job.FsyncOnClose && c.does(dirWrite) {
		if err = unix.Fsync(f.fd); err != nil {
			err = fmt.Errorf("job %s: sync %s: %w", c.job.Name, f.path, err)
		}
	}
	if f.fd == c.fd {
		c.unmapFile()
	}
	_ = unix.Close(f.fd)
	f.fd = -1
	if unlink {
		if uerr := f.file.Remove(); uerr != nil && err == nil {
			err = fmt.Errorf("job %s: unlink %s: %w", c.job.Name, f.path, uerr)
		}
	}
	return err
}
