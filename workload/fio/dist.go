package fio

import (
	"math"
	"math/rand/v2"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// distribution is fio's random_distribution= over nranges blocks, with the
// algorithms of fio's lib/zipf.c and lib/gauss.c: zipf (Gray et al.'s
// approximation, zeta summed over at most 10M ranks) and pareto draw a
// rank, gauss a sum of uniforms, and each is scattered over the region
// with fio's multiplicative hash plus a random offset, so the hot blocks
// are spread as in fio. zoned picks a zone by its access share, then a
// uniform block in it. Nothing is allocated per draw.
type distribution struct {
	kind    fiov1.Distribution
	nranges uint64
	off     uint64 // fio's rand_off
	// zipf
	theta, zetan, zeta2 float64
	// pareto
	pow float64
	// gauss
	stddev uint64
	// zoned: per access percent 1..100, the zone's start and size in blocks
	zoneStart, zoneSize [100]uint64
}

// zipfMaxGen caps the zeta sum, as fio's ZIPF_MAX_GEN.
const zipfMaxGen = 10_000_000

// goldenRatio64 is fio's GOLDEN_RATIO_64 (hash.h's __hash_u64).
const goldenRatio64 = 0x61C8864680B583EB

func newDistribution(j *fiov1.Job, nranges uint64, seed uint64) *distribution {
	switch j.RandomDistribution {
	case fiov1.Distribution_DISTRIBUTION_UNSPECIFIED, fiov1.Distribution_DISTRIBUTION_RANDOM:
		return nil
	}
	r := rand.New(rand.NewPCG(seed, 4))
	d := &distribution{kind: j.RandomDistribution, nranges: nranges, off: r.Uint64N(nranges)}
	p := j.DistributionParam
	switch d.kind {
	case fiov1.Distribution_DISTRIBUTION_ZIPF:
		d.theta = p
		d.zeta2 = 1 + math.Pow(0.5, p)
		for i := uint64(0); i < min(nranges, zipfMaxGen); i++ {
			d.zetan += math.Pow(1/float64(i+1), p)
		}
	case fiov1.Distribution_DISTRIBUTION_PARETO:
		d.pow = math.Log(p) / math.Log(1-p)
	case fiov1.Distribution_DISTRIBUTION_NORMAL:
		d.off = 0
		if p != 0 {
			d.stddev = min(uint64(math.Ceil(float64(nranges)*p/100)), nranges/2)
		}
	case fiov1.Distribution_DISTRIBUTION_ZONED, fiov1.Distribution_DISTRIBUTION_ZONED_ABS:
		d.zones(j, nranges)
	}
	return d
}

// zones fills the per-percent zone table from zoned:/zoned_abs: entries.
func (d *distribution) zones(j *fiov1.Job, nranges uint64) {
	i, start := 0, uint64(0)
	gran := max(nranges, 1)
	for _, z := range j.Zones {
		size := nranges * uint64(z.SizePercent) / 100
		if d.kind == fiov1.Distribution_DISTRIBUTION_ZONED_ABS {
			size = z.Size // in blocks, converted by the parser's caller
		}
		for k := uint32(0); k < z.AccessPercent && i < 100; k++ {
			d.zoneStart[i], d.zoneSize[i] = start, max(size, 1)
			i++
		}
		start += size
	}
	for ; i < 100; i++ {
		d.zoneStart[i], d.zoneSize[i] = 0, gran
	}
}

// next draws a block index in [0, nranges).
func (d *distribution) next(r *rand.Rand) uint64 {
	n := d.nranges
	var v uint64
	switch d.kind {
	case fiov1.Distribution_DISTRIBUTION_ZIPF:
		alpha := 1 / (1 - d.theta)
		eta := (1 - math.Pow(2/float64(n), 1-d.theta)) / (1 - d.zeta2/d.zetan)
		u := r.Float64()
		z := u * d.zetan
		switch {
		case z < 1:
			v = 0
		case z < 1+math.Pow(0.5, d.theta):
			v = 1
		default:
			v = uint64(float64(n) * math.Pow(eta*u-eta+1, alpha))
		}
		return (v*goldenRatio64 + d.off) % n
	case fiov1.Distribution_DISTRIBUTION_PARETO:
		v = uint64(float64(n-1) * math.Pow(r.Float64(), d.pow))
		return (v*goldenRatio64 + d.off) % n
	case fiov1.Distribution_DISTRIBUTION_NORMAL:
		const iters = 12
		sum := uint64(0)
		for i := 0; i < iters; i++ {
			sum += r.Uint64N(n + 1)
		}
		sum = (sum + iters - 1) / iters
		if d.stddev > 0 {
			dev := int64(r.Uint64N(d.stddev)) - int64(d.stddev/2)
			for dev > 0 && sum+uint64(dev) >= n {
				dev /= 2
			}
			sum = uint64(int64(sum) + dev)
		}
		return (sum*goldenRatio64 + d.off) % n
	}
	k := r.Uint64N(100)
	return (d.zoneStart[k] + r.Uint64N(d.zoneSize[k])) % n
}
