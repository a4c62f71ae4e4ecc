package fio

import (
	"math/rand/v2"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Directions, indexing per-direction state.
const (
	dirRead  = 0
	dirWrite = 1
)

// generator decides the direction and offset of each I/O of one job clone,
// deterministically from its seed. It allocates nothing per I/O.
type generator struct {
	random  bool
	readPct uint32 // 100 = read only, 0 = write only
	base    uint64 // offset= in bytes
	bs      uint64
	blocks  uint64 // whole blocks in the region
	seqNext [2]uint64
	issued  uint64 // blocks handed out in this loop
	offRand *rand.Rand
	dirRand *rand.Rand
	rmap    *randMap // nil for sequential jobs and norandommap
}

func newGenerator(j *fiov1.Job, size uint64, seed uint64) *generator {
	g := &generator{
		base:    j.Offset,
		bs:      j.Bs,
		blocks:  size / j.Bs,
		offRand: rand.New(rand.NewPCG(seed, 1)),
		dirRand: rand.New(rand.NewPCG(seed, 2)),
	}
	switch j.Rw {
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
	if g.random && !j.Norandommap && g.blocks > 0 {
		g.rmap = newRandMap(g.blocks)
	}
	return g
}

// dir picks the next I/O's direction.
func (g *generator) dir() int {
	switch g.readPct {
	case 100:
		return dirRead
	case 0:
		return dirWrite
	}
	if g.dirRand.Uint32N(100) < g.readPct {
		return dirRead
	}
	return dirWrite
}

// next returns the next offset for direction d, or false when this loop
// over the region is complete (every block handed out once).
func (g *generator) next(d int) (uint64, bool) {
	if g.issued >= g.blocks {
		return 0, false
	}
	g.issued++
	var b uint64
	switch {
	case !g.random:
		b = g.seqNext[d] % g.blocks
		g.seqNext[d]++
	case g.rmap != nil:
		b, _ = g.rmap.take(g.offRand.Uint64N(g.blocks))
	default:
		b = g.offRand.Uint64N(g.blocks)
	}
	return g.base + b*g.bs, true
}

// restart begins a new loop over the region (loops=, or time_based
// wrapping around as fio does when the region is covered).
func (g *generator) restart() {
	g.issued = 0
	g.seqNext = [2]uint64{}
	if g.rmap != nil {
		g.rmap.reset()
	}
}
