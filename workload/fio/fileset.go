package fio

import (
	"errors"
	"fmt"
	"io/fs"
	"math"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// cfile is one of a clone's files: the guard's resolved path (what is
// laid out, opened and removed), its region and its own offsets (fio's
// per-file last_pos and random map; the random draws, the block sizes
// and the read/write mix stay the job's, shared by every file's
// generator, as fio keeps them in the thread).
type cfile struct {
	file   beneath.Path
	path   string // file.String(), for messages
	fd     int
	offset uint64
	size   uint64
	gen    *generator
	done   bool // this loop's I/O in the file is issued (fio_file_done)
	// open is fio's FIO_FILE_open: the file takes I/O until it is done
	// (openfiles= bounds how many are); its descriptor, once opened,
	// stays open until the job ends.
	open bool
}

// fileService is fio's get_next_file for a clone with several files: the
// file each I/O goes to, and the bytes the job issues per loop over all
// of them. Nothing here allocates or locks: the clone's goroutine owns it.
type fileService struct {
	mode    fiov1.FileService
	nr      uint32 // file_service_nr: I/Os per turn
	left    uint32 // fio's file_service_left
	next    int    // round robin's next file
	cur     int    // the file in service, -1 = none
	rnd     *taus88
	dist    *fileDist // zipf, pareto, normal
	nDone   int
	nOpen   int    // files open (fio's nr_open_files)
	maxOpen int    // openfiles=, default every file
	issued  uint64 // bytes handed out, all loops
	limit   uint64 // bytes per loop: io_size=, or size= as setup_files leaves it
	total   uint64 // limit times loops=: where fio's do_io stops issuing
	maxBS   uint64
	// closeFDs: a file's descriptor closes when its turn ends (the
	// synchronous engines, which have nothing in flight then); the
	// queueing engines keep it open until the job ends.
	closeFDs bool
	// fio re-seeds a repeatable job's generators every loop
	fileSeed, mixSeed uint32
}

// use makes file i the clone's current one: the engines, syncs and logs
// use c.fd, c.gen and c.path.
func (c *clone) use(i int) {
	f := c.files[i]
	c.fd, c.gen, c.offset, c.size, c.file, c.path = f.fd, f.gen, f.offset, f.size, f.file, f.path
	if c.iolog != nil {
		c.iolog.name = ioLogName(f.path)
	}
}

// planFiles gives a clone with several files its regions and generators.
func planFiles(c *clone, paths []beneath.Path, thread int) error {
	j := c.job
	real := make([]int64, len(paths))
	for i, p := range paths {
		real[i] = -1
		if st, err := p.Stat(); err == nil {
			real[i] = st.Size
		}
	}
	sizeSeed, fileSeed := c.seed^0x5eed5, c.seed^0xf11e
	if j.Randrepeat {
		sizeSeed = fioSeed(j.Randseed, thread, fioRandFileSizeOff)
		fileSeed = fioSeed(j.Randseed, thread, fioRandFileOff)
	}
	sizes := newTaus88(uint32(sizeSeed))
	regions, limit, err := fileRegions(j, c.offset, real, sizes.next)
	if err != nil {
		return err
	}
	if j.IoSize > 0 {
		limit = j.IoSize
	}
	var first *generator
	for i, p := range paths {
		r := regions[i]
		g := newGenerator(j, r.offset, r.size, c.seed)
		if first == nil {
			first = g
			mixSeed := c.seed
			if j.Randrepeat {
				mixSeed = fioSeed(j.Randseed, thread, fioRandMixOff)
			}
			g.useFioMix(mixSeed)
		} else {
			// the job's draws, one stream over all its files
			g.offRand, g.dirRand, g.bsRand, g.mix = first.offRand, first.dirRand, first.bsRand, first.mix
		}
		// a file is done when the stream of the direction chosen reaches
		// its region's end (fio keeps one per direction and does not wrap
		// the offsets of a job with several files) or its random map is
		// full; without one, only the job's bytes end its I/O
		g.limit, g.noWrap = math.MaxUint64, true
		c.files = append(c.files, &cfile{file: p, path: p.String(), fd: -1, offset: r.offset, size: r.size, gen: g})
	}
	mode := j.FileService
	if mode == fiov1.FileService_FILE_SERVICE_UNSPECIFIED {
		mode = fiov1.FileService_FILE_SERVICE_ROUNDROBIN
	}
	nr := j.FileServiceNr
	if nr == 0 && j.FileService == fiov1.FileService_FILE_SERVICE_UNSPECIFIED {
		nr = 1
	}
	mixSeed := c.seed
	if j.Randrepeat {
		mixSeed = fioSeed(j.Randseed, thread, fioRandMixOff)
	}
	maxOpen := len(paths)
	if j.OpenFiles > 0 && int(j.OpenFiles) < maxOpen {
		maxOpen = int(j.OpenFiles)
	}
	c.fsv = fileService{mode: mode, nr: nr, cur: -1, maxOpen: maxOpen, limit: limit, total: limit * uint64(max(j.Loops, 1)),
		maxBS: max(j.Bs, 1), fileSeed: uint32(fileSeed), mixSeed: uint32(mixSeed)}
	if limit > 0 && c.fsv.total/limit != uint64(max(j.Loops, 1)) {
		c.fsv.total = math.MaxUint64
	}
	c.fsv.closeFDs = !queuedEngine(j)
	switch {
	case mode == fiov1.FileService_FILE_SERVICE_RANDOM:
		c.fsv.rnd = newTaus88(uint32(fileSeed))
	case nonUniform(mode):
		c.fsv.dist = newFileDist(j, len(paths), uint32(fileSeed))
	}
	c.use(0)
	return nil
}

// pickFile is fio's __get_next_file: the file in service keeps the I/O
// for file_service_nr I/Os (sequential: until it is done), then the next
// file not done is taken in turn, or at random (fio's next_file_state
// generator, so that the files get the I/O counts fio gives them). A file
// chosen that is not open while openfiles= are gives -1 (fio's -EBUSY).
func (c *clone) pickFile() int {
	fs := &c.fsv
	if fs.cur >= 0 && c.files[fs.cur].open {
		if fs.mode == fiov1.FileService_FILE_SERVICE_SEQUENTIAL {
			return fs.cur
		}
		if fs.left > 0 {
			fs.left--
			return fs.cur
		}
	}
	n := len(c.files)
	i := 0
	switch {
	case fs.dist != nil:
		i = min(fs.dist.next(), n-1) // a file is never done
	case fs.mode == fiov1.FileService_FILE_SERVICE_RANDOM:
		for {
			i = int(float64(n) * (float64(fs.rnd.next()) / (1 << 32)))
			if !c.files[i].done {
				break
			}
		}
	default:
		for {
			i = fs.next
			if fs.next++; fs.next >= n {
				fs.next = 0
			}
			if !c.files[i].done {
				break
			}
		}
	}
	if f := c.files[i]; !f.open {
		if fs.nOpen >= fs.maxOpen {
			return -1
		}
		f.open = true
		fs.nOpen++
		if c.iolog != nil {
			c.iolog.name = ioLogName(f.path)
			c.iolog.file(c.now(), "open")
		}
	}
	fs.cur = i
	fs.left = fs.nr - 1 // fio's unsigned: :0 keeps a file until it is done
	return i
}

// closeTurn ends file i's turn for the pass (fio's td_io_close_file when
// a file is done): another may be opened in its place.
func (c *clone) closeTurn(f *cfile) {
	if !f.open {
		return
	}
	f.open = false
	c.fsv.nOpen--
	if c.iolog != nil {
		c.iolog.name = ioLogName(f.path)
		c.iolog.file(c.now(), "close")
	}
	if c.fsv.closeFDs && f.fd >= 0 {
		// nothing flies with a synchronous engine: the descriptor closes
		// now, as fio's (fsync_on_close first), so openfiles= bounds them
		if err := c.closeOne(f, false); err != nil && c.fileErr == nil {
			c.fileErr = err
		}
		if c.fd == -1 || c.file == f.file {
			c.fd = -1
		}
	}
}

// restartFiles begins a new pass over every file, as fio's
// clear_io_state: the files closed and their offsets from their start,
// the mix's count afresh and, for a repeatable job, the file choice and
// the mix re-seeded.
func (c *clone) restartFiles() {
	for _, f := range c.files {
		c.closeTurn(f)
		f.done = false
		f.gen.restart()
	}
	fs := &c.fsv
	fs.nDone, fs.cur = 0, -1
	c.lastWasSync = false
	if m := c.files[0].gen.mix; m != nil {
		m.until = 0
		if c.job.Randrepeat {
			m.rnd.reseed(fs.mixSeed)
		}
	}
	if fs.rnd != nil && c.job.Randrepeat {
		fs.rnd.reseed(fs.fileSeed)
	}
	if fs.dist != nil && c.job.Randrepeat {
		fs.dist.reseed(c.job, fs.fileSeed)
	}
}

// anotherPass is fio's keep_running once every file is done: time_based
// runs on, loops= gives its passes, and io_size= more than the files hold
// takes passes until it is issued.
func (c *clone) anotherPass() bool {
	j, fs := c.job, &c.fsv
	switch {
	case j.TimeBased:
		return true
	case c.loopsLeft > 1:
		c.loopsLeft--
		return true
	case j.IoSize > 0 && fs.issued < j.IoSize:
		return j.IoSize-fs.issued >= fs.maxBS
	}
	return false
}

// nextOpFiles is nextOp for a clone with several files: fio's get_io_u
// chooses the file first and then what to do in it, so a sync due after
// N writes goes to the file whose turn it is, and a file whose region is
// issued is done for the loop and the next one is tried.
func (c *clone) nextOpFiles() (op int, off, n uint64) {
	if c.number > 0 && c.ios >= c.number {
		return opDone, 0, 0
	}
	if c.flow.group != nil && !c.waitFlow() {
		return opDone, 0, 0
	}
	fs := &c.fsv
	for restarts, fails := 0, 0; ; {
		if fs.issued >= fs.total && !c.job.TimeBased {
			return opDone, 0, 0
		}
		if fs.nDone >= len(c.files) {
			if !c.passGranted {
				if !c.anotherPass() {
					return opDone, 0, 0
				}
				if c.job.UnlinkEachLoop && !isNull(c.job) {
					c.passGranted = true
					return opPass, 0, 0 // the engine drains, then unlinkFiles
				}
			}
			c.passGranted = false
			if restarts++; restarts > 1 {
				return opDone, 0, 0 // a fresh pass had nothing to issue
			}
			c.restartFiles()
			continue
		}
		if c.job.ThinktimeNs > 0 && c.ios >= c.lastThink+uint64(max(c.job.ThinktimeBlocks, 1)) {
			c.lastThink = c.ios
			return opThink, 0, 0
		}
		i := c.pickFile()
		if i < 0 {
			return opBusy, 0, 0
		}
		if f := c.files[i]; f.fd < 0 && !isNull(c.job) {
			if err := c.openFD(f); err != nil {
				c.fileErr = err
				return opDone, 0, 0
			}
		}
		c.use(i)
		if c.syncDue() {
			if c.iolog != nil {
				c.iolog.io(c.now(), syncLogName(c.datasync), c.lastOff, 0)
			}
			return opSync, 0, 0
		}
		d := c.gen.dir()
		if c.rate.on {
			d = c.rateDir(d)
		}
		var ok bool
		off, n, ok = c.gen.next(d)
		if !ok && c.gen.random && (c.job.TimeBased || fs.dist != nil) {
			// fio resets the file when its random map is full in a
			// time-based job or with a non-uniform file choice, and draws
			// again in it (get_next_rand_block)
			c.gen.restart()
			off, n, ok = c.gen.next(d)
		}
		if !ok {
			if fs.dist != nil {
				// a non-uniform choice never finishes a file: its offsets
				// start over and the I/O goes to a file drawn anew
				// (set_io_u_file's fio_file_reset)
				if fails++; fails > 2*len(c.files)+2 {
					return opDone, 0, 0 // regions with no block in them
				}
				c.closeTurn(c.files[i])
				c.gen.restart()
				continue
			}
			c.files[i].done = true
			fs.nDone++
			c.closeTurn(c.files[i])
			continue
		}
		fails = 0
		fs.issued += n
		restarts = 0
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
}

// endFsyncFiles is end_fsync=1 over every file, as fio syncs each.
func (c *clone) endFsyncFiles() error {
	for i, f := range c.files {
		if f.fd < 0 && !isNull(c.job) {
			continue // never opened: nothing written
		}
		c.use(i)
		if err := c.doSync(); err != nil {
			return err
		}
	}
	return nil
}

// layoutNote is fio's line for the files a clone lays out.
func layoutNote(name string, files int, bytes uint64) string {
	if files == 1 {
		return fmt.Sprintf("%s: Laying out IO file (1 file / %dMiB)", name, bytes>>20)
	}
	return fmt.Sprintf("%s: Laying out IO files (%d files / total %dMiB)", name, files, bytes>>20)
}

// fileServiceShift is fio's FIO_FSERVICE_SHIFT: the distributions draw
// among nr_files<<10 ranges, the file is the draw >> 10.
const fileServiceShift = 10

// fileDist is fio's zipf, pareto and normal file choice (lib/zipf.c and
// lib/gauss.c over fio's 32-bit generator, hash disabled as
// init_rand_file_service sets it), so the files get fio's shares.
type fileDist struct {
	kind                fiov1.FileService
	rnd                 taus88
	nranges             uint64
	off                 uint64
	theta, zeta2, zetan float64
	// zipf's per-draw constants, computed once (fio computes them per
	// draw, to the same values)
	alpha, eta, half float64
	pow              float64
	stddev           uint32
}

// frand32Max is fio's FRAND32_MAX.
const frand32Max = float64(math.MaxUint32)

func newFileDist(j *fiov1.Job, files int, seed uint32) *fileDist {
	d := &fileDist{kind: j.FileService, nranges: uint64(files) << fileServiceShift}
	d.reseed(j, seed)
	p := j.FileServiceParam
	if d.kind == fiov1.FileService_FILE_SERVICE_GAUSS {
		if p != 0 {
			d.stddev = uint32(min(uint64(math.Ceil(float64(d.nranges)*p/100)), d.nranges/2))
		}
		return d
	}
	if d.kind == fiov1.FileService_FILE_SERVICE_PARETO {
		d.pow = math.Log(p) / math.Log(1-p)
		return d
	}
	d.theta = p
	d.zeta2 = 1 + math.Pow(0.5, p)
	for i := uint64(0); i < min(d.nranges, zipfMaxGen); i++ {
		d.zetan += math.Pow(1/float64(i+1), p)
	}
	d.alpha = 1 / (1 - d.theta)
	d.eta = (1 - math.Pow(2/float64(d.nranges), 1-d.theta)) / (1 - d.zeta2/d.zetan)
	d.half = math.Pow(0.5, d.theta)
	return d
}

// reseed starts the draws afresh (fio's shared_rand_init and gauss_init
// seeding; the zeta sum, which does not depend on it, is kept).
func (d *fileDist) reseed(j *fiov1.Job, seed uint32) {
	d.rnd.reseed(seed)
	if d.kind == fiov1.FileService_FILE_SERVICE_GAUSS {
		d.off = 0
		if j.FileServiceCentered {
			d.off = uint64(uint32(int64(float64(d.nranges) * (j.FileServiceCenter - 0.5))))
		}
		return
	}
	d.off = uint64(d.rnd.next())
	if j.FileServiceCentered {
		d.off = uint64(float64(d.nranges) * j.FileServiceCenter)
	}
}

// next is the next file's index.
func (d *fileDist) next() int {
	n := d.nranges
	var v uint64
	switch d.kind {
	case fiov1.FileService_FILE_SERVICE_ZIPF:
		u := float64(d.rnd.next()) / frand32Max
		switch z := u * d.zetan; {
		case z < 1:
			v = 1
		case z < 1+d.half:
			v = 2
		default:
			v = 1 + uint64(float64(n)*math.Pow(d.eta*u-d.eta+1, d.alpha))
		}
		v = (v - 1 + d.off) % n
	case fiov1.FileService_FILE_SERVICE_PARETO:
		u := float64(d.rnd.next()) / frand32Max
		v = (uint64(float64(n-1)*math.Pow(u, d.pow)) + d.off) % n
	default:
		sum := uint64(0)
		for range 12 {
			sum += uint64(d.rnd.next()) % (n + 1)
		}
		sum = (sum + 11) / 12
		if d.stddev > 0 {
			vr := int32(float64(d.stddev) * (float64(d.rnd.next()) / (frand32Max + 1)))
			dev := int32(uint32(vr) - d.stddev/2) // C's unsigned arithmetic, back to int
			for uint64(int64(dev))+sum >= n {
				dev /= 2
			}
			sum += uint64(int64(dev))
		}
		v = (sum + d.off) % n
	}
	return int(v >> fileServiceShift)
}

// unlinkFiles is unlink_each_loop=1 between loops, once the loop's I/O
// has completed: every file closed and removed, as fio's clear_io_state
// and unlink_all_files; a job with one file reopens it now (created
// afresh when it writes), one with several as their turns come.
func (c *clone) unlinkFiles() error {
	for _, f := range c.files {
		if f.fd >= 0 {
			_ = unix.Close(f.fd)
			f.fd = -1
		}
		if err := f.file.Remove(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("job %s: unlink_each_loop: %s: %w", c.job.Name, f.path, err)
		}
	}
	c.fd = -1
	if len(c.files) == 1 {
		if err := c.openFD(c.files[0]); err != nil {
			return err
		}
		c.use(0)
	}
	return nil
}

// queuedEngine reports whether j's engine can have requests in flight
// when the next is prepared (libaio, io_uring, posixaio, offload, the null
// engine's queue): run picks the loop the same way.
func queuedEngine(j *fiov1.Job) bool {
	switch {
	case j.SubmitOffload, j.Ioengine == fiov1.IOEngine_IO_ENGINE_POSIXAIO,
		j.Ioengine == fiov1.IOEngine_IO_ENGINE_LIBAIO, j.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING:
		return true
	case j.Ioengine == fiov1.IOEngine_IO_ENGINE_NULL:
		return j.Iodepth > 1
	}
	return false
}
