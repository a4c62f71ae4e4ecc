package fio

import (
	"fmt"
	"math/rand/v2"

	"golang.org/x/sys/unix"
)

// buffers are iodepth I/O buffers in one anonymous mapping: page aligned
// (so O_DIRECT accepts them on any logical block size up to the page size,
// and larger sizes are rounded to whole pages), outside the Go heap (the
// kernel writes into them asynchronously), filled with random bytes so that
// compressing or deduplicating devices see fio-like data.
type buffers struct {
	mem  []byte
	size int // bytes per buffer, page rounded
}

func newBuffers(n int, bs uint64, seed uint64, fill bufferFill) (*buffers, error) {
	page := unix.Getpagesize()
	size := (int(bs) + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("allocate %d buffers of %d bytes: %w", n, size, err)
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	for i := 0; i < n; i++ {
		fill.fill(mem[i*size:(i+1)*size], r)
	}
	return &buffers{mem: mem, size: size}, nil
}

// bufferFill is how write buffers are filled (fio's zero_buffers,
// buffer_compress_percentage and buffer_compress_chunk): in each chunk,
// the first (100-compress)% random bytes and the rest zeros, so a
// compressing device can shrink the data by about compress%.
type bufferFill struct {
	// pattern (buffer_pattern=): the bytes buffers are filled with, or
	// with compress the compressible part of each chunk, as fio's
	// fill_io_buffer.
	pattern  []byte
	zero     bool
	compress uint64 // percent
	chunk    int    // bytes; 0 = the whole buffer
}

// fill fills p (no allocation: refill_buffers calls it per write).
func (f bufferFill) fill(p []byte, r *rand.Rand) {
	if f.compress == 0 && len(f.pattern) > 0 {
		fillRepeat(p, f.pattern)
		return
	}
	if f.zero && f.compress == 0 {
		clear(p)
		return
	}
	if f.compress == 0 {
		fillRandomFrom(p, r)
		return
	}
	chunk := f.chunk
	if chunk <= 0 || chunk > len(p) {
		chunk = len(p)
	}
	for off := 0; off < len(p); off += chunk {
		seg := p[off:min(off+chunk, len(p))]
		rnd := len(seg) * int(100-f.compress) / 100
		fillRandomFrom(seg[:rnd], r)
		if len(f.pattern) > 0 {
			fillRepeat(seg[rnd:], f.pattern)
		} else {
			clear(seg[rnd:])
		}
	}
}

// buf returns buffer i, bs bytes long.
func (b *buffers) buf(i int, bs uint64) []byte {
	off := i * b.size
	return b.mem[off : off+int(bs) : off+b.size]
}

func (b *buffers) close() {
	if b != nil && b.mem != nil {
		_ = unix.Munmap(b.mem)
		b.mem = nil
	}
}

// fillRandom fills p with pseudo-random bytes from seed.
func fillRandom(p []byte, seed uint64) {
	fillRandomFrom(p, rand.New(rand.NewPCG(seed, 0x5eed)))
}

// fillRandomFrom fills p with pseudo-random bytes from r.
func fillRandomFrom(p []byte, r *rand.Rand) {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		v := r.Uint64()
		for k := 0; k < 8; k++ {
			p[i+k] = byte(v >> (8 * k))
		}
	}
	for v := r.Uint64(); i < len(p); i++ {
		p[i] = byte(v)
		v >>= 8
	}
}
