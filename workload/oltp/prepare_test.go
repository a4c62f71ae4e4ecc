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
	ps := testSpec(t, "wp_load_ps", 2, 2*bulkRows+345)
	ps.Threads = u32p(8) // two chunks per table: four writers
	text := testSpec(t, "wp_load_text", 2, 2*bulkRows+345)
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

// TestLoadSpeaksTheTablesCharset: prepare loads in the tables' character
// set where the values are the same bytes in it, and in the default
// (utf8mb4) otherwise; either way the rows read back as sysbench's
// digit groups.
func TestLoadSpeaksTheTablesCharset(t *testing.T) {
	tests := []struct{ charset, wantNames string }{
		{"latin1", "SET NAMES latin1"},
		{"utf8mb4", "SET NAMES utf8mb4"},
		{"utf16", ""}, // not a client character set: no SET NAMES
	}
	admin := adminConn(t, "")
	for _, tt := range tests {
		t.Run(tt.charset, func(t *testing.T) {
			s := testSpec(t, "wp_charset_"+tt.charset, 1, 50)
			o := mustOptions(t, s)
			db := quoteIdent(o.Conn.DB)
			for _, q := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db + " CHARACTER SET " + tt.charset} {
				if _, err := admin.exec(q); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { _, _ = admin.exec("DROP DATABASE IF EXISTS " + db) })
			if err := Prepare(t.Context(), o, envQuiet()); err != nil {
				t.Fatal(err)
			}
			c := adminConn(t, o.Conn.DB)
			names, err := loadCharset(c)
			if err != nil || names != tt.wantNames {
				t.Errorf("loadCharset = %q, %v; want %q", names, err, tt.wantNames)
			}
			rows, err := c.queryStrings("SELECT CONCAT(c, '/', pad) FROM sbtest1 WHERE id = 7")
			if err != nil || len(rows) != 1 {
				t.Fatalf("row 7: %v, %v", rows, err)
			}
			want := strings.ReplaceAll(cTemplate+"/"+padTemplate, "#", "0")
			got := []byte(rows[0])
			for i := range got {
				if got[i] >= '0' && got[i] <= '9' {
					got[i] = '0'
				}
			}
			if string(got) != want {
				t.Errorf("row 7 c/pad = %q; want sysbench's digit groups", rows[0])
			}
		})
	}
}
