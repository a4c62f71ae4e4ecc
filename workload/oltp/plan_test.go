package oltp

import (
	"bytes"
	"testing"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// TestPlanDrawsInSysbenchOrder replays event() of oltp_write_only.lua by
// hand on a second random stream with the same seed: the plan must make
// the same draws in the same order, including the table drawn for a
// statement group that is empty.
func TestPlanDrawsInSysbenchOrder(t *testing.T) {
	ro := RandOptions{Type: oltpv1.RandType_RAND_TYPE_SPECIAL, Seed: 5, Iter: 12, Pct: 1, Res: 75, ParetoH: 0.2}
	tests := []struct {
		name                  string
		skipTrx               bool
		index, nonIndex, dels int
	}{
		{"defaults", false, 1, 1, 1},
		{"several of each", false, 2, 3, 2},
		{"no index updates", false, 0, 1, 1},
		{"skip-trx, deletes only", true, 0, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Tables: 8, TableSize: 100000, SkipTrx: tt.skipTrx,
				IndexUpdates: tt.index, NonIndexUpdates: tt.nonIndex, DeleteInserts: tt.dels}
			p := newPlan(&o)
			got, want := NewRand(ro, 3), NewRand(ro, 3)
			for range 3 { // successive transactions reuse the buffers
				p.draw(got, &o)
				i := 0
				expect := func(kind stmtKind, table uint32, id int64) *step {
					t.Helper()
					s := &p.steps[i]
					if s.kind != kind || s.table != table || s.id != id {
						t.Fatalf("step %d = kind %d table %d id %d; want kind %d table %d id %d", i, s.kind, s.table, s.id, kind, table, id)
					}
					i++
					return s
				}
				table := func() uint32 { return want.Uniform(1, 8) }
				id := func() int64 { return int64(want.Default(1, 100000)) }
				digits := func(tmpl string) []byte { b := []byte(tmpl); want.FillDigits(b); return b }
				if !tt.skipTrx {
					expect(kBegin, 0, 0)
				}
				tn := table()
				for range tt.index {
					expect(kIndexUpdate, tn, id())
				}
				tn = table()
				for range tt.nonIndex {
					c := digits(cTemplate)
					if s := expect(kNonIndexUpdate, tn, id()); !bytes.Equal(s.c, c) {
						t.Fatalf("step %d: c %s; want %s", i-1, s.c, c)
					}
				}
				tn = table()
				for range tt.dels {
					did, k := id(), id()
					c, pad := digits(cTemplate), digits(padTemplate)
					expect(kDelete, tn, did)
					if s := expect(kInsert, tn, did); s.k != k || !bytes.Equal(s.c, c) || !bytes.Equal(s.pad, pad) {
						t.Fatalf("insert step %d: k %d c %s pad %s; want %d %s %s", i-1, s.k, s.c, s.pad, k, c, pad)
					}
				}
				if !tt.skipTrx {
					expect(kCommit, 0, 0)
				}
				if i != len(p.steps) {
					t.Fatalf("plan has %d steps; event() has %d", len(p.steps), i)
				}
			}
		})
	}
}

func TestAppendText(t *testing.T) {
	c, pad := []byte("12-34"), []byte("5-6")
	tests := []struct {
		s    step
		want string
	}{
		{step{kind: kBegin}, "BEGIN"},
		{step{kind: kCommit}, "COMMIT"},
		{step{kind: kIndexUpdate, table: 3, id: 77}, "UPDATE sbtest3 SET k=k+1 WHERE id=77"},
		{step{kind: kNonIndexUpdate, table: 1, id: 5, c: c}, "UPDATE sbtest1 SET c='12-34' WHERE id=5"},
		{step{kind: kDelete, table: 12, id: 9}, "DELETE FROM sbtest12 WHERE id=9"},
		{step{kind: kInsert, table: 2, id: 9, k: 4, c: c, pad: pad}, "INSERT INTO sbtest2 (id, k, c, pad) VALUES (9, 4, '12-34', '5-6')"},
	}
	for _, tt := range tests {
		if got := string(appendText(nil, &tt.s)); got != tt.want {
			t.Errorf("appendText = %q; want %q", got, tt.want)
		}
	}
}
