package fio

import (
	"math/rand/v2"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Directions, indexing per-direction state.
const (
	dirRead  = 0
	dirWrite = 1
	dirTrim  = 2
	nDirs    = 3
)

// dirBlocks is one direction's block-size rule, resolved for the hot path.
type dirBlocks struct {
	min, max uint64
	align    uint64   // random offsets are multiples of it
	split    []uint64 // bssplit: cumulative percent per entry (last = 100)
	splitBS  []uint64
}

// fixed reports whether every I/O of the direction has one size.
func (b *dirBlocks) fixed() bool { return b.min == b.max && len(b.split) == 0 }

// generator decides the direction, offset and length of each I/O of one
// job clone, deterministically from its seed. It allocates nothing per I/O.
type generator struct {
	random  bool
	readPct uint32 // 100 = read only, 0 = write only (or trim)
	// trim: the job trims only (rw=trim, randtrim); trimWrite: each trim
	// is followed by a write of the same block (trimwrite,
	// randtrimwrite), pending holds it until issued.
	trim, trimWrite bool
	pending         bool
	pendOff, pendN  uint64
	base            uint64 // offset= in bytes
	size            uint64 // bytes of the region
	limit           uint64 // bytes of I/O per loop (io_size, default size)
	bs              [nDirs]dirBlocks
	gran            uint64 // random map granularity: the smallest block size
	blocks          uint64 // gran-sized blocks in the region
	seqNext         [nDirs]uint64
	seqAdd          int64  // rw=...:N, sequential: hole after each I/O (negative: backwards)
	noWrap          bool   // a stream ends at the region's end (a file of several)
	seqNr           uint32 // rw=...:N, random: I/Os per new random offset
	seqLeft         uint32
	issued          uint64 // bytes handed out in this loop
	offRand         *rand.Rand
	dirRand         *rand.Rand
	bsRand          *rand.Rand
	mix             *fioMix       // rw=rw, randrw: fio's direction choice
	dist            *distribution // nil = uniform
	rmap            *randMap      // nil for sequential jobs and norandommap
	zone            *stridedZones // zonemode=strided; nil without
}

// stridedZones is fio's zonemode=strided: the I/O goes to one zone of
// zonerange bytes (offsets drawn, or the stream wrapping, within it) until
// zonesize bytes are done, then to the zone zoneskip bytes past its end,
// back to the region's start past its end, as fio's
// setup_strided_zone_mode.
type stridedZones struct {
	size, rng, skip uint64
	region          uint64 // the whole region's bytes
	start           uint64 // the current zone's offset in the region
	bytes           uint64 // bytes of I/O in the current zone
}

func newGenerator(j *fiov1.Job, offset, size uint64, seed uint64) *generator {
	g := &generator{
		base:    offset,
		size:    size,
		limit:   size,
		offRand: rand.New(rand.NewPCG(seed, 1)),
		dirRand: rand.New(rand.NewPCG(seed, 2)),
		bsRand:  rand.New(rand.NewPCG(seed, 3)),
		seqAdd:  int64(j.RwSeqAdd),
		seqNr:   j.RwSeqNr,
	}
	if j.IoSize > 0 {
		g.limit = j.IoSize
	}
	g.bs[dirRead] = resolveBlocks(j.ReadBs, j.Bs)
	g.bs[dirWrite] = resolveBlocks(j.WriteBs, j.Bs)
	g.bs[dirTrim] = resolveBlocks(j.TrimBs, j.Bs)
	switch j.Rw {
	case fiov1.ReadWrite_READ_WRITE_TRIM:
		g.trim = true
	case fiov1.ReadWrite_READ_WRITE_RANDTRIM:
		g.trim, g.random = true, true
	case fiov1.ReadWrite_READ_WRITE_TRIMWRITE:
		g.trimWrite = true
	case fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE:
		g.trimWrite, g.random = true, true
	case fiov1.ReadWrite_READ_WRITE_READ:
		g.readPct = 100
	case fiov1.ReadWrite_READ_WRITE_RANDREAD:
		g.readPct, g.random = 100, true
	case fiov1.ReadWrite_READ_WRITE_WRITE:
	case fiov1.ReadWrite_READ_WRITE_RANDWRITE:
		g.random = true
	case fiov1.ReadWrite_READ_WRITE_RW:
		g.readPct = j.Rwmixread
	case fiov1.ReadWrite_READ_WRITE_RANDRW:
		g.readPct, g.random = j.Rwmixread, true
	}
	if j.ZoneMode == zoneStrided && j.ZoneSize > 0 && j.ZoneRange > 0 {
		// offsets are drawn within a zone; the region's size still
		// bounds the I/O (limit)
		g.zone = &stridedZones{size: j.ZoneSize, rng: j.ZoneRange, skip: j.ZoneSkip, region: size}
		g.size = min(j.ZoneRange, size)
	}
	g.gran = g.minBS()
	g.blocks = g.size / g.gran
	if g.random && g.blocks > 0 {
		g.dist = newDistribution(j, g.blocks, seed)
		if !j.Norandommap {
			g.rmap = newRandMap(g.blocks)
		}
	}
	return g
}

// resolveBlocks turns a direction's spec into its rule; a job without one
// (specs from before bs=R,W) uses bs.
func resolveBlocks(b *fiov1.BlockSizes, bs uint64) dirBlocks {
	if b == nil || b.Min == 0 {
		return dirBlocks{min: bs, max: bs, align: bs}
	}
	d := dirBlocks{min: b.Min, max: b.Max, align: b.Align}
	if d.align == 0 {
		d.align = d.min
	}
	cum := uint64(0)
	for _, s := range b.Split {
		cum += uint64(s.Percent)
		d.split = append(d.split, cum)
		d.splitBS = append(d.splitBS, s.Bs)
	}
	return d
}

// minBS is the smallest block size of the directions the job does.
func (g *generator) minBS() uint64 {
	if g.trim || g.trimWrite {
		return g.bs[dirTrim].min
	}
	switch g.readPct {
	case 100:
		return g.bs[dirRead].min
	case 0:
		return g.bs[dirWrite].min
	}
	return min(g.bs[dirRead].min, g.bs[dirWrite].min)
}

// dir picks the next I/O's direction.
func (g *generator) dir() int {
	switch {
	case g.trim:
		return dirTrim
	case g.trimWrite && g.pending:
		return dirWrite
	case g.trimWrite:
		return dirTrim
	}
	switch g.readPct {
	case 100:
		return dirRead
	case 0:
		return dirWrite
	}
	if g.mix != nil {
		return g.mix.dir()
	}
	if g.dirRand.Uint32N(100) < g.readPct {
		return dirRead
	}
	return dirWrite
}

// useFioMix makes a mixed job choose its directions as fio does, from
// fio's seed for the job.
func (g *generator) useFioMix(seed uint64) {
	if g.readPct > 0 && g.readPct < 100 && !g.trim && !g.trimWrite {
		g.mix = newFioMix(seed, g.readPct)
	}
}

// issued counts an I/O handed out in direction d (as fio's io_issues,
// which the mix follows), and takes a direction rate control chose
// instead, as fio's rate_ddir sets rwmix_ddir.
func (g *generator) issuedIn(d int) {
	if g.mix != nil {
		g.mix.issues[d]++
		g.mix.cur = d
	}
}

// buflen picks the next I/O's length for direction d, as fio's
// get_next_buflen: a bssplit entry by its share, or a size in the range
// rounded down to a multiple of the smallest (power-of-two) size.
func (g *generator) buflen(d int) uint64 {
	b := &g.bs[d]
	if b.fixed() {
		return b.min
	}
	if len(b.split) > 0 {
		r := g.bsRand.Uint64N(100) + 1
		for i, c := range b.split {
			if r <= c {
				return b.splitBS[i]
			}
		}
		return b.splitBS[len(b.splitBS)-1]
	}
	n := b.min + g.bsRand.Uint64N(b.max-b.min+1)
	if b.min&(b.min-1) == 0 {
		n &^= b.min - 1
	}
	return max(n, b.min)
}

// done reports whether this loop over the region has issued all its I/O:
// no room for another smallest block within io_size.
func (g *generator) done() bool {
	return !g.pending && (g.issued+g.gran > g.limit || g.blocks == 0)
}

// does reports whether the job issues I/O in direction d.
func (g *generator) does(d int) bool {
	switch d {
	case dirTrim:
		return g.trim || g.trimWrite
	case dirRead:
		return !g.trim && !g.trimWrite && g.readPct > 0
	}
	return !g.trim && (g.trimWrite || g.readPct < 100)
}

// next returns the next offset and length for direction d, or false when
// this loop is complete.
func (g *generator) next(d int) (off, n uint64, ok bool) {
	if g.pending && d == dirWrite {
		// fio's trimwrite: the write goes where the trim just went, with
		// its length, and does not count against the region again.
		g.pending = false
		return g.pendOff, g.pendN, true
	}
	if g.done() {
		return 0, 0, false
	}
	n = g.buflen(d)
	if left := g.limit - g.issued; n > left {
		n = left / g.gran * g.gran
	}
	var zoneStart uint64
	if g.zone != nil {
		zoneStart = g.enterZone(d)
	}
	if !g.random {
		off, n, ok = g.nextSeq(d, n)
	} else {
		off, n, ok = g.nextRand(d, n)
	}
	if !ok {
		return 0, 0, false
	}
	g.issued += n
	off += zoneStart
	if g.zone != nil {
		g.zone.bytes += n
	}
	if g.trimWrite {
		g.pending, g.pendOff, g.pendN = true, g.base+off, n
	}
	return g.base + off, n, true
}

// enterZone moves to the next zone once this one had zonesize bytes, and
// starts the zone's offsets afresh every zonerange bytes (fio's
// fio_file_reset: the stream back to the zone's start, the random map
// cleared); it returns the zone's offset in the region.
func (g *generator) enterZone(d int) uint64 {
	z := g.zone
	if z.bytes >= z.size {
		z.bytes = 0
		z.start += z.rng + z.skip
		if z.start >= z.region {
			z.start = 0
		}
		g.seqNext[d] = 0
	}
	if z.bytes%z.rng == 0 {
		g.seqNext = [nDirs]uint64{}
		g.seqLeft = 0
		if g.rmap != nil {
			g.rmap.reset()
		}
	}
	return z.start
}

// nextSeq continues direction d's sequential stream, wrapping at the end
// of the region (io_size larger than size), as fio does.
func (g *generator) nextSeq(d int, n uint64) (uint64, uint64, bool) {
	off := g.seqNext[d]
	if off+g.gran > g.size {
		if g.seqAdd != 0 || g.noWrap {
			// With a hole, fio's loop ends where the next block no longer
			// fits (128m read with bs=1m:512k is 85 reads); the hole
			// itself wraps past the end (afterHole).
			return 0, 0, false
		}
		off = 0
	}
	if off+n > g.size {
		n = (g.size - off) / g.gran * g.gran
	}
	if n == 0 {
		return 0, 0, false
	}
	g.seqNext[d] = g.afterHole(off + n)
	return off, n, true
}

// afterHole is where the sequential stream continues after an I/O ending
// at end, with rw=...:N's hole, as fio's get_next_seq_offset: past the
// region it wraps to the start, or going backwards, to the region's last
// position plus the (negative) hole.
func (g *generator) afterHole(end uint64) uint64 {
	if g.seqAdd == 0 {
		return end
	}
	p := int64(end) + g.seqAdd
	if p >= 0 && uint64(p) < g.size {
		return uint64(p)
	}
	if g.seqAdd > 0 {
		return 0
	}
	return uint64(max(int64(g.size)+g.seqAdd, 0))
}

// nextRand draws a random offset (aligned to blockalign), from the random
// map when there is one, so that the region is covered without repeats;
// rw=randX:N keeps N I/Os sequential from each drawn offset.
func (g *generator) nextRand(d int, n uint64) (uint64, uint64, bool) {
	if g.seqNr > 1 && g.seqLeft > 0 {
		g.seqLeft--
		if off := g.seqNext[d]; off+n <= g.size {
			g.seqNext[d] = off + n
			if g.rmap == nil || g.rmap.takeRun(off/g.gran, n/g.gran) == n/g.gran {
				return off, n, true
			}
		}
	}
	align := max(g.bs[d].align, g.gran)
	var b uint64
	if g.rmap != nil {
		var ok bool
		if b, ok = g.rmap.take(g.pick(align)); !ok {
			return 0, 0, false
		}
		if want := n / g.gran; want > 1 {
			got := 1 + g.rmap.takeRun(b+1, want-1)
			n = got * g.gran
		}
	} else {
		b = g.pick(align)
		if (b*g.gran)+n > g.size {
			n = (g.size - b*g.gran) / g.gran * g.gran
		}
	}
	off := b * g.gran
	if n == 0 {
		return 0, 0, false
	}
	if g.seqNr > 1 {
		g.seqLeft = g.seqNr - 1
		g.seqNext[d] = off + n
	}
	return off, n, true
}

// pick draws a block index (in gran units) whose offset is a multiple of
// align, from the job's random_distribution.
func (g *generator) pick(align uint64) uint64 {
	step := align / g.gran
	var b uint64
	if g.dist != nil {
		b = g.dist.next(g.offRand)
	} else {
		b = g.offRand.Uint64N(g.blocks)
	}
	if step > 1 {
		b -= b % step
	}
	return b
}

// restart begins a new loop over the region (loops=, or time_based
// wrapping around as fio does when the region is covered).
func (g *generator) restart() {
	g.issued = 0
	g.seqNext = [nDirs]uint64{}
	g.pending = false
	g.seqLeft = 0
	if g.rmap != nil {
		g.rmap.reset()
	}
	if g.zone != nil {
		g.zone.start, g.zone.bytes = 0, 0
	}
}
