package fio

// fio's own random numbers, where fio's choices are visible in what a job
// does: the read/write mix of rw=rw and randrw (which direction each I/O
// takes, hence the bytes each direction moves) follows fio's generator
// and seeding, so a job mixes as it does under fio 3.33 (fio's t0008
// counts the bytes written to within 1%).

// taus88 is fio's 32-bit Tausworthe generator (lib/rand.h).
type taus88 struct{ s1, s2, s3 uint32 }

func seedMin(x, m uint32) uint32 {
	if x < m {
		return x + m
	}
	return x
}

// newTaus88 is fio's __init_rand32 (its "2^31" is C's xor: 29, 19, 5).
func newTaus88(seed uint32) *taus88 {
	t := &taus88{}
	t.reseed(seed)
	return t
}

// reseed starts t afresh from seed, in place (fio's td_fill_rand_seeds
// between loops).
func (t *taus88) reseed(seed uint32) {
	lcg := func(x uint32) uint32 { return x*69069 ^ seed }
	t.s1 = seedMin(lcg((2^31)+(2^17)+(2^7)), 1)
	t.s2 = seedMin(lcg(t.s1), 7)
	t.s3 = seedMin(lcg(t.s2), 15)
	for i := 0; i < 6; i++ {
		t.next()
	}
}

func (t *taus88) next() uint32 {
	t.s1 = ((t.s1 & 4294967294) << 12) ^ (((t.s1 << 13) ^ t.s1) >> 19)
	t.s2 = ((t.s2 & 4294967288) << 4) ^ (((t.s2 << 2) ^ t.s2) >> 25)
	t.s3 = ((t.s3 & 4294967280) << 17) ^ (((t.s3 << 3) ^ t.s3) >> 11)
	return t.s1 ^ t.s2 ^ t.s3
}

// between is fio's rand_between for a 32-bit state: start..end inclusive.
func (t *taus88) between(start, end uint32) uint32 {
	r := t.next()
	return start + uint32(float64(end-start+1)*(float64(r)/(1<<32)))
}

// fio's FIO_RAND_MIX_OFF: the rwmix state's place among a job's seeds.
const fioRandMixOff = 4

// fioSeed is fio's setup_random_seeds for a repeatable job: seed index i
// of the job numbered thread (1-based, in the order fio creates jobs and
// their numjobs clones).
func fioSeed(randseed uint64, thread, i int) uint64 {
	seed := randseed
	for k := 0; k < 4; k++ {
		seed *= 0x9e370001
	}
	for k := 0; k < i; k++ {
		seed *= 0x9e370001
	}
	return seed*uint64(thread) + uint64(i)
}

// fioMix is fio's get_rw_ddir for a mixed job: a direction is kept until
// as many I/Os were issued in it as its share of the ones issued in the
// other before the switch (set_rwmix_bytes), then drawn again.
type fioMix struct {
	rnd     *taus88
	readPct uint32
	cur     int
	until   uint64        // rwmix_issues
	issues  [nDirs]uint64 // I/Os issued per direction (verify reads aside)
}

func newFioMix(seed uint64, readPct uint32) *fioMix {
	return &fioMix{rnd: newTaus88(uint32(seed)), readPct: readPct, cur: dirRead}
}

func (m *fioMix) dir() int {
	if m.issues[m.cur] >= m.until {
		d := dirWrite
		if m.rnd.between(1, 100) <= m.readPct {
			d = dirRead
		}
		if d != m.cur {
			share := uint64(m.readPct)
			if m.cur == dirRead {
				share = 100 - share
			}
			m.until = m.issues[m.cur] * share / 100
		}
		m.cur = d
	}
	return m.cur
}
