package ledger

import (
	"reflect"
	"testing"
)

func TestLedgerCompare(t *testing.T) {
	tests := []struct {
		name           string
		acked, present []uint64
		issued         uint64
		want           Check
	}{
		{"all present", []uint64{1, 2, 3}, []uint64{1, 2, 3}, 3,
			Check{Acknowledged: 3}},
		{"in flight survived", []uint64{1, 2}, []uint64{1, 2, 3}, 3,
			Check{Acknowledged: 2, PresentUnacknowledged: 1}},
		{"acknowledged lost", []uint64{1, 2, 3}, []uint64{1}, 4,
			Check{Acknowledged: 3, LostAcknowledged: 2, LostSample: []Pair{{7, 2}, {7, 3}}}},
		{"retried seq gap", []uint64{1, 3}, []uint64{1, 3}, 3,
			Check{Acknowledged: 2}},
		{"never issued", []uint64{1}, []uint64{1, 9}, 2,
			Check{Acknowledged: 1, Unknown: 1}},
	}
	for _, tt := range tests {
		var got Check
		(&Ledger{}).compare(&got, 7, tt.acked, tt.issued, tt.present)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: compare(acked %v, present %v) = %+v; want %+v", tt.name, tt.acked, tt.present, got, tt.want)
		}
	}
}

func TestThreadLedgerSeqs(t *testing.T) {
	l := New(2)
	a := l.Thread(1)
	s1, s2 := a.Next(), a.Next()
	a.Ack(s2)
	acked, issued := a.snapshot()
	if s1 != 1 || s2 != 2 || issued != 2 || !reflect.DeepEqual(acked, []uint64{2}) || l.Acknowledged() != 1 {
		t.Errorf("seqs %d,%d issued %d acked %v total %d; want 1,2 issued 2 acked [2] total 1", s1, s2, issued, acked, l.Acknowledged())
	}
}
