package fio

import "math/bits"

// randMap is fio's random map (lib/axmap.c in spirit): one bit per block,
// set once the block has been used, so that random offsets cover the whole
// range without repeats until covered. Level i+1 has a bit set for each
// full word of level i, so finding the next free block skips full regions
// in O(levels) word scans rather than walking the whole map.
type randMap struct {
	levels [][]uint64
	nbits  []uint64 // valid bits per level
	free   uint64   // blocks not yet used
}

func newRandMap(n uint64) *randMap {
	m := &randMap{}
	for size := n; ; size = (size + 63) / 64 {
		m.levels = append(m.levels, make([]uint64, (size+63)/64))
		m.nbits = append(m.nbits, size)
		if size <= 64 {
			break
		}
	}
	m.reset()
	return m
}

// reset marks every block free again (a new loop over the file).
func (m *randMap) reset() {
	for i, l := range m.levels {
		clear(l)
		// Padding bits past the end count as used, so the last word can be
		// full.
		for b := m.nbits[i]; b < uint64(len(l))*64; b++ {
			m.setAt(i, b)
		}
	}
	m.free = m.nbits[0]
}

// setAt sets bit b of level i and propagates fullness upwards.
func (m *randMap) setAt(i int, b uint64) {
	for ; i < len(m.levels); i++ {
		w := &m.levels[i][b/64]
		*w |= 1 << (b % 64)
		if *w != ^uint64(0) {
			return
		}
		b /= 64
	}
}

func (m *randMap) isSet(b uint64) bool { return m.levels[0][b/64]&(1<<(b%64)) != 0 }

// take marks block b used if it is free; otherwise it marks and returns the
// next free block after b (wrapping), as fio's axmap_next_free does. ok is
// false when every block is used.
func (m *randMap) take(b uint64) (uint64, bool) {
	if m.free == 0 {
		return 0, false
	}
	if m.isSet(b) {
		nb, ok := m.firstFree(0, b)
		if !ok {
			nb, ok = m.firstFree(0, 0)
		}
		if !ok {
			return 0, false
		}
		b = nb
	}
	m.setAt(0, b)
	m.free--
	return b, true
}

// firstFree returns the first clear bit at or after i in level lv.
func (m *randMap) firstFree(lv int, i uint64) (uint64, bool) {
	words, n := m.levels[lv], m.nbits[lv]
	for i < n {
		w := i / 64
		word := words[w] | (1<<(i%64) - 1)
		if word != ^uint64(0) {
			idx := w*64 + uint64(bits.TrailingZeros64(^word))
			return idx, idx < n
		}
		if lv+1 == len(m.levels) {
			i = (w + 1) * 64
			continue
		}
		nw, ok := m.firstFree(lv+1, w+1)
		if !ok {
			return 0, false
		}
		i = nw * 64
	}
	return 0, false
}

// takeRun marks up to n consecutive free blocks from b on and returns how
// many it marked: it stops at the first used block or the end, as fio
// shortens an I/O that would overlap blocks already done.
func (m *randMap) takeRun(b, n uint64) uint64 {
	got := uint64(0)
	for ; got < n && b+got < m.nbits[0] && !m.isSet(b+got); got++ {
		m.setAt(0, b+got)
		m.free--
	}
	return got
}
