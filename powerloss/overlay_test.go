package powerloss

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// model is the obvious reference: the whole file as a byte slice.
type model struct{ b []byte }

func (m *model) write(off int64, p []byte) {
	if end := off + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[off:], p)
}

func (m *model) truncate(n int64) {
	if n <= int64(len(m.b)) {
		m.b = m.b[:n]
		return
	}
	m.b = append(m.b, make([]byte, n-int64(len(m.b)))...)
}

// backingReader serves durable bytes from b, short past its end.
func backingReader(b []byte) func([]byte, int64) error {
	return func(dst []byte, off int64) error {
		if off < int64(len(b)) {
			copy(dst, b[off:])
		}
		return nil
	}
}

// TestOverlayMatchesModel drives the overlay and the model with the same
// random writes and truncates over a durable base and checks every byte,
// the size and the dirty count after each step.
func TestOverlayMatchesModel(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		base := make([]byte, rng.IntN(3000))
		for i := range base {
			base[i] = byte(rng.IntN(255) + 1)
		}
		ov := newOverlay(int64(len(base)))
		m := &model{b: append([]byte(nil), base...)}
		for step := 0; step < 60; step++ {
			if rng.IntN(5) == 0 {
				n := int64(rng.IntN(4000))
				ov.truncate(n)
				m.truncate(n)
			} else {
				off := int64(rng.IntN(4000))
				p := make([]byte, 1+rng.IntN(700))
				for i := range p {
					p[i] = byte(rng.IntN(256))
				}
				ov.write(off, p)
				m.write(off, p)
			}
			checkOverlay(t, seed, step, ov, m, base)
		}
	}
}

func checkOverlay(t *testing.T, seed uint64, step int, ov *overlay, m *model, base []byte) {
	t.Helper()
	if ov.size != int64(len(m.b)) {
		t.Fatalf("seed %d step %d: size = %d; want %d", seed, step, ov.size, len(m.b))
	}
	got := make([]byte, len(m.b)+100)
	n, _ := ov.read(got, 0, backingReader(base))
	if !bytes.Equal(got[:n], m.b) {
		t.Fatalf("seed %d step %d: content differs from the model", seed, step)
	}
	var dirty int64
	for i, e := range ov.exts {
		dirty += int64(len(e.data))
		if i > 0 && ov.exts[i-1].end() >= e.off {
			t.Fatalf("seed %d step %d: extents %d and %d touch or overlap", seed, step, i-1, i)
		}
		if e.end() > ov.size {
			t.Fatalf("seed %d step %d: extent past size", seed, step)
		}
	}
	if dirty != ov.dirty {
		t.Fatalf("seed %d step %d: dirty = %d; extents hold %d", seed, step, ov.dirty, dirty)
	}
}

// TestOverlayAppendIsAmortised checks that sequential appends grow one
// extent instead of copying it each time (the redo-log pattern).
func TestOverlayAppendIsAmortised(t *testing.T) {
	ov := newOverlay(0)
	p := make([]byte, 512)
	allocs := testing.AllocsPerRun(1, func() {
		for i := int64(0); i < 4096; i++ {
			ov.write(i*512, p)
		}
	})
	if len(ov.exts) != 1 || ov.dirty != 4096*512 {
		t.Fatalf("appends left %d extents, %d dirty bytes; want 1, %d", len(ov.exts), ov.dirty, 4096*512)
	}
	if allocs > 200 {
		t.Fatalf("4096 appends made %.0f allocations; want amortised growth (< 200)", allocs)
	}
}

func TestTornPrefix(t *testing.T) {
	tests := []struct {
		s    span
		want []int64 // every possible cut point
	}{
		{span{0, 16384}, []int64{0, 4096, 8192, 12288, 16384}},
		{span{100, 200}, []int64{100, 200}},
		{span{4000, 8200}, []int64{4000, 4096, 8192, 8200}},
		{span{4096, 8192}, []int64{4096, 8192}},
	}
	for _, tt := range tests {
		seen := map[int64]bool{}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 1000 {
			seen[tornPrefix(rng, tt.s)] = true
		}
		if len(seen) != len(tt.want) {
			t.Errorf("tornPrefix(%+v) hit %v; want exactly %v", tt.s, seen, tt.want)
		}
		for _, w := range tt.want {
			if !seen[w] {
				t.Errorf("tornPrefix(%+v) never chose %d", tt.s, w)
			}
		}
	}
}
