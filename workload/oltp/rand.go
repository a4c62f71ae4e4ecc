package oltp

import (
	"fmt"
	"math"
	"math/bits"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// RandOptions are sysbench's --rand-* options.
type RandOptions struct {
	Type    oltpv1.RandType
	Seed    uint64
	Iter    int     // --rand-spec-iter
	Pct     int     // --rand-spec-pct
	Res     int     // --rand-spec-res
	ParetoH float64 // --rand-pareto-h
}

func resolveRand(spec *oltpv1.Spec) (RandOptions, []error) {
	r := RandOptions{Type: spec.GetRandType(), Seed: spec.GetRandSeed(),
		Iter: int(u32(spec.RandSpecIter, 12)), Pct: int(u32(spec.RandSpecPct, 1)),
		Res: int(u32(spec.RandSpecRes, 75)), ParetoH: f64(spec.RandParetoH, 0.2)}
	if r.Type == oltpv1.RandType_RAND_TYPE_UNSPECIFIED {
		r.Type = oltpv1.RandType_RAND_TYPE_SPECIAL
	}
	var errs []error
	if r.Iter < 1 {
		errs = append(errs, fmt.Errorf("--rand-spec-iter=%d: want >= 1", r.Iter))
	}
	if r.Pct < 0 || r.Pct > 100 {
		errs = append(errs, fmt.Errorf("--rand-spec-pct=%d: want 0..100", r.Pct))
	}
	if r.Res < 0 || r.Res >= 100 {
		errs = append(errs, fmt.Errorf("--rand-spec-res=%d: want 0..99", r.Res))
	}
	if !(r.ParetoH > 0 && r.ParetoH < 1) {
		errs = append(errs, fmt.Errorf("--rand-pareto-h=%v: want a value in (0, 1)", r.ParetoH))
	}
	return r, errs
}

// Rand is one goroutine's random source: sysbench's xoroshiro128+ with
// its distributions and their precomputed constants. Not safe for
// concurrent use; each goroutine owns one.
type Rand struct {
	s0, s1 uint64
	typ    oltpv1.RandType
	iter   int
	// precomputed as sb_rand_init does
	iterMult, pctMult, pct2Mult, resMult, paretoPower float64
}

// NewRand returns a source for stream number stream of the options' seed:
// different streams (threads, workers) draw different, reproducible
// sequences.
func NewRand(o RandOptions, stream uint64) *Rand {
	r := &Rand{typ: o.Type, iter: o.Iter,
		iterMult: 1 / float64(o.Iter), pctMult: float64(o.Pct) / 100, pct2Mult: float64(o.Pct) / 200,
		resMult: 100 / (100 - float64(o.Res)), paretoPower: math.Log(o.ParetoH) / math.Log(1-o.ParetoH)}
	// splitmix64 expands (seed, stream) into a non-zero xoroshiro state.
	x := o.Seed ^ (stream+1)*0x9e3779b97f4a7c15
	r.s0, x = splitmix(x)
	r.s1, _ = splitmix(x)
	if r.s0|r.s1 == 0 {
		r.s1 = 1
	}
	return r
}

func splitmix(x uint64) (uint64, uint64) {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31), x
}

// Uint64 is xoroshiro128+'s next output.
func (r *Rand) Uint64() uint64 {
	s0, s1 := r.s0, r.s1
	res := s0 + s1
	s1 ^= s0
	r.s0 = bits.RotateLeft64(s0, 55) ^ s1 ^ (s1 << 14)
	r.s1 = bits.RotateLeft64(s1, 36)
	return res
}

// Float64 is uniform in [0, 1), from the top 53 bits as sysbench does.
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) * (1.0 / (1 << 53)) }

// Uniform is sb_rand_uniform: an integer in [a, b].
func (r *Rand) Uniform(a, b uint32) uint32 {
	return a + uint32(r.Float64()*float64(b-a+1))
}

// Default draws from the --rand-type distribution (sb_rand_default).
func (r *Rand) Default(a, b uint32) uint32 {
	switch r.typ {
	case oltpv1.RandType_RAND_TYPE_UNIFORM:
		return r.Uniform(a, b)
	case oltpv1.RandType_RAND_TYPE_GAUSSIAN:
		return r.Gaussian(a, b)
	case oltpv1.RandType_RAND_TYPE_PARETO:
		return r.Pareto(a, b)
	}
	return r.Special(a, b)
}

// Gaussian is sb_rand_gaussian: the mean of iter uniform draws.
func (r *Rand) Gaussian(a, b uint32) uint32 {
	t := float64(b - a + 1)
	sum := 0.0
	for i := 0; i < r.iter; i++ {
		sum += r.Float64() * t
	}
	return a + uint32(sum*r.iterMult)
}

// Special is sb_rand_special: with probability res% a uniform value in the
// pct% of the range around its middle, otherwise a gaussian one over the
// whole range.
func (r *Rand) Special(a, b uint32) uint32 {
	t := float64(b - a)
	rnd := r.Float64()
	if rnd*t*r.resMult < t {
		sum := 0.0
		for i := 0; i < r.iter; i++ {
			sum += r.Float64()
		}
		return a + uint32(sum*t*r.iterMult)
	}
	d := t * r.pctMult
	res := rnd*(d+1) + t/2 - t*r.pct2Mult
	return a + uint32(res)
}

// Pareto is sb_rand_pareto.
func (r *Rand) Pareto(a, b uint32) uint32 {
	return a + uint32(float64(b-a+1)*math.Pow(r.Float64(), r.paretoPower))
}

// The c and pad templates of oltp_common.lua: '#' becomes a random digit.
const (
	cTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	padTemplate = "###########-###########-###########-###########-###########"
)

// FillDigits overwrites buf (laid out like a template) with a fresh
// random string: '#' positions get uniform digits, the '-' separators stay.
// sysbench draws one double per digit; this takes up to 16 digits from one
// 64-bit draw by repeated multiply-by-10 (each step keeps the low word as
// the next fraction), which is uniform to within 2^-10 per digit and much
// cheaper on the hot path. buf must already hold the template.
func (r *Rand) FillDigits(buf []byte) {
	var x uint64
	left := 0
	for i := range buf {
		if buf[i] == '-' {
			continue
		}
		if left == 0 {
			x, left = r.Uint64(), 16
		}
		d, lo := bits.Mul64(x, 10)
		x = lo
		left--
		buf[i] = byte('0' + d)
	}
}
