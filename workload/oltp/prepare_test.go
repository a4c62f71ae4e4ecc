package oltp

import (
	"strings"
	"testing"
)

// TestPreparedAndTextLoadsAreIdentical loads the same spec once with the
// prepared multi-row INSERT (the default) and once with text INSERTs
// (--db-ps-mode=disable): the tables must hold the same rows, including
// the shorter last batch of each chunk.
func TestPreparedAndTextLoadsAreIdentical(t *testing.T) {
	ps := testSpec("wp_load_ps", 2, 2*bulkRows+345)
	ps.Threads = u32p(8) // two chunks per table: four writers
	text := testSpec("wp_load_text", 2, 2*bulkRows+345)
	text.Threads, text.UseTextProtocol = u32p(8), true
	a, b := prepared(t, ps), prepared(t, text)
	if len(chunks(a)) != 4 {
		t.Fatalf("%d chunks; the test wants two per table", len(chunks(a)))
	}
	admin := adminConn(t, "")
	for n := 1; n <= 2; n++ {
		sum := func(db string) string {
			v, err := admin.queryStrings("SELECT CONCAT(COUNT(*), ' ', SUM(k), ' ', SUM(CRC32(CONCAT(id, ':', k, ':', c, ':', pad)))) FROM " +
				quoteIdent(db) + ".sbtest" + itoa(n))
			if err != nil || len(v) != 1 {
				t.Fatalf("checksum %s.sbtest%d = %v, %v", db, n, v, err)
			}
			return v[0]
		}
		got, want := sum(a.Conn.DB), sum(b.Conn.DB)
		if got != want {
			t.Errorf("sbtest%d: prepared load %s; text load %s", n, got, want)
		}
		if !strings.HasPrefix(got, itoa(2*bulkRows+345)+" ") {
			t.Errorf("sbtest%d: %s; want %d rows", n, got, 2*bulkRows+345)
		}
	}
}
