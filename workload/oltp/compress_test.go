package oltp

import (
	"testing"

	"github.com/writepath/writepath/workload/oltp/wire"
)

// TestCompressedSession: with --mysql-compression the server runs the
// client's session compressed. The client's own connection, through
// writepath's framing (prepare, then a text statement), records the
// session's Compression status where another connection reads it; the
// prepare phase's driver connections are compressed too; and a run sends
// the server fewer bytes than the same run uncompressed.
func TestCompressedSession(t *testing.T) {
	s := testSpec(t, "wp_compress", 1, 1000)
	s.Threads, s.Events, s.TimeSeconds, s.MysqlCompression = u32p(2), 300, u32p(0), true
	o := prepared(t, s)
	admin := adminConn(t, o.Conn.DB)
	if _, err := admin.exec("CREATE TABLE seen (v VARCHAR(8))"); err != nil {
		t.Fatal(err)
	}

	c, err := wire.Dial(t.Context(), mysqlConfig(o.Conn, true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Caps&wire.CapCompress == 0 || c.Compressor() == nil {
		t.Fatalf("capabilities %#x: the login did not ask for compression", c.Caps)
	}
	if _, err := c.Prepare(tableSQL(1).insert); err != nil {
		t.Fatalf("prepare over compressed framing: %v", err)
	}
	// Long enough (over MinCompressLength) to go deflated.
	if n, err := c.Exec("INSERT INTO seen SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'COMPRESSION'"); err != nil || n != 1 {
		t.Fatalf("insert over compressed framing: %d rows, %v", n, err)
	}
	if v, err := admin.queryStrings("SELECT v FROM seen"); err != nil || len(v) != 1 || v[0] != "ON" {
		t.Fatalf("the client's session's Compression = %q, %v; want ON", v, err)
	}

	dc, err := dial(t.Context(), o.Conn, true)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.close()
	if v, err := dc.queryStrings("SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'COMPRESSION'"); err != nil || len(v) != 1 || v[0] != "ON" {
		t.Fatalf("a driver connection's Compression = %q, %v; want ON", v, err)
	}

	received := func(compress bool) int64 {
		o := o
		o.Conn.Compress = compress
		before := queryInt(t, admin, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'BYTES_RECEIVED'")
		sum, _, err := runFor(t, t.Context(), o)
		if err != nil || sum.Transactions != 300 {
			t.Fatalf("run (compression %v): %v, %d transactions", compress, err, sum.Transactions)
		}
		return queryInt(t, admin, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'BYTES_RECEIVED'") - before
	}
	plain, packed := received(false), received(true)
	t.Logf("bytes received for 300 transactions: %d plain, %d compressed (%.2f)", plain, packed, float64(packed)/float64(plain))
	if packed >= plain*95/100 {
		t.Errorf("the server received %d bytes compressed, %d plain; want fewer compressed", packed, plain)
	}
	assertRowCounts(t, o)
}
