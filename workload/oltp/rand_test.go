package oltp

import (
	"testing"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

func defaultRand(typ oltpv1.RandType) RandOptions {
	return RandOptions{Type: typ, Seed: 1, Iter: 12, Pct: 1, Res: 75, ParetoH: 0.2}
}

// TestSpecialDistribution: sysbench's default sends about 75% of draws to
// the 1% of keys around the middle of the range.
func TestSpecialDistribution(t *testing.T) {
	r := NewRand(defaultRand(oltpv1.RandType_RAND_TYPE_SPECIAL), 0)
	const n, size = 200000, 100000
	hot := 0
	for i := 0; i < n; i++ {
		v := r.Default(1, size)
		if v < 1 || v > size {
			t.Fatalf("Special(1, %d) = %d", size, v)
		}
		if v >= size/2-size/200 && v <= size/2+size/200+1 {
			hot++
		}
	}
	// 75% uniform inside the hot 1%, plus the gaussian's share of it.
	if f := float64(hot) / n; f < 0.74 || f > 0.80 {
		t.Errorf("share of draws in the middle 1%% = %.3f; want about 0.75", f)
	}
}

func TestDistributionsStayInRange(t *testing.T) {
	for _, typ := range []oltpv1.RandType{oltpv1.RandType_RAND_TYPE_UNIFORM, oltpv1.RandType_RAND_TYPE_GAUSSIAN,
		oltpv1.RandType_RAND_TYPE_SPECIAL, oltpv1.RandType_RAND_TYPE_PARETO} {
		r := NewRand(defaultRand(typ), 3)
		var sum float64
		for i := 0; i < 100000; i++ {
			v := r.Default(1, 1000)
			if v < 1 || v > 1000 {
				t.Fatalf("%v Default(1, 1000) = %d", typ, v)
			}
			sum += float64(v)
		}
		mean := sum / 100000
		t.Logf("%v mean %.1f", typ, mean)
		if typ != oltpv1.RandType_RAND_TYPE_PARETO && (mean < 480 || mean > 520) {
			t.Errorf("%v mean = %.1f; want about 500", typ, mean)
		}
		if typ == oltpv1.RandType_RAND_TYPE_PARETO && mean > 300 {
			t.Errorf("pareto mean = %.1f; want skewed to the low ids", mean)
		}
	}
}

func TestRandIsDeterministicPerStream(t *testing.T) {
	o := defaultRand(oltpv1.RandType_RAND_TYPE_UNIFORM)
	a, b, c := NewRand(o, 5), NewRand(o, 5), NewRand(o, 6)
	same := 0
	for i := 0; i < 100; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatal("two sources of the same seed and stream differ")
		}
		if x == z {
			same++
		}
	}
	if same > 0 {
		t.Errorf("streams 5 and 6 share %d draws", same)
	}
}

func TestFillDigitsKeepsTemplate(t *testing.T) {
	r := NewRand(defaultRand(oltpv1.RandType_RAND_TYPE_UNIFORM), 0)
	buf := []byte(cTemplate)
	counts := [10]int{}
	for i := 0; i < 2000; i++ {
		r.FillDigits(buf)
		for j, ch := range buf {
			if cTemplate[j] == '-' {
				if ch != '-' {
					t.Fatalf("separator at %d overwritten: %q", j, buf)
				}
				continue
			}
			if ch < '0' || ch > '9' {
				t.Fatalf("non-digit %q at %d", ch, j)
			}
			counts[ch-'0']++
		}
	}
	for d, n := range counts {
		if n < 20000 || n > 24000 { // 220,000 digits / 10
			t.Errorf("digit %d drawn %d times of 220000; want about 22000", d, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.FillDigits(buf) }); n != 0 {
		t.Errorf("FillDigits allocates %v times", n)
	}
}
