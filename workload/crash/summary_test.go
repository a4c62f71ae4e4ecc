package crash

import (
	"reflect"
	"testing"
)

func TestStat(t *testing.T) {
	if got := stat([]float64{5, 1, 3}); got != (Stat{Median: 3, Min: 1, Max: 5, N: 3}) {
		t.Errorf("stat(5,1,3) = %+v", got)
	}
	if got := stat([]float64{4, 2}); got.Median != 3 {
		t.Errorf("stat(4,2).Median = %v; want 3", got.Median)
	}
	if got := stat(nil); got != (Stat{}) {
		t.Errorf("stat(nil) = %+v", got)
	}
}

func TestKillMoments(t *testing.T) {
	c := config{rounds: 5, killMin: 5e9, killMax: 15e9, killSeed: 42}
	a, seed := killMoments(c)
	b, _ := killMoments(c)
	if seed != 42 || !reflect.DeepEqual(a, b) {
		t.Fatalf("killMoments not reproducible from seed 42: %v vs %v", a, b)
	}
	for _, k := range a {
		if k < c.killMin || k > c.killMax {
			t.Errorf("kill moment %v outside [%v, %v]", k, c.killMin, c.killMax)
		}
	}
}
