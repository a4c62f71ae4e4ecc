package crash

import (
	"reflect"
	"testing"
)

func TestLedgerCompare(t *testing.T) {
	tests := []struct {
		name           string
		acked, present []uint64
		issued         uint64
		want           LedgerCheck
	}{
		{"all present", []uint64{1, 2, 3}, []uint64{1, 2, 3}, 3,
			LedgerCheck{Acknowledged: 3}},
		{"in flight survived", []uint64{1, 2}, []uint64{1, 2, 3}, 3,
			LedgerCheck{Acknowledged: 2, PresentUnacknowledged: 1}},
		{"acknowledged lost", []uint64{1, 2, 3}, []uint64{1}, 4,
			LedgerCheck{Acknowledged: 3, LostAcknowledged: 2, LostSample: []Pair{{7, 2}, {7, 3}}}},
		{"retried seq gap", []uint64{1, 3}, []uint64{1, 3}, 3,
			LedgerCheck{Acknowledged: 2}},
		{"never issued", []uint64{1}, []uint64{1, 9}, 2,
			LedgerCheck{Acknowledged: 1, Unknown: 1}},
	}
	for _, tt := range tests {
		var got LedgerCheck
		(&Ledger{}).compare(&got, 7, tt.acked, tt.issued, tt.present)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: compare(acked %v, present %v) = %+v; want %+v", tt.name, tt.acked, tt.present, got, tt.want)
		}
	}
}

func TestThreadLedgerSeqs(t *testing.T) {
	l := NewLedger(2)
	a := l.Thread(1)
	s1, s2 := a.Next(), a.Next()
	a.Ack(s2)
	acked, issued := a.snapshot()
	if s1 != 1 || s2 != 2 || issued != 2 || !reflect.DeepEqual(acked, []uint64{2}) || l.Acknowledged() != 1 {
		t.Errorf("seqs %d,%d issued %d acked %v total %d; want 1,2 issued 2 acked [2] total 1", s1, s2, issued, acked, l.Acknowledged())
	}
}

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
