package sysbench

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestScriptExpectations: what sysbench 1.0.20's own tests of its oltp
// scripts expect (tests/t/script_oltp_*.t, here for oltp_write_only),
// checked on writepath beside the real sysbench: the tables each makes
// (SHOW CREATE TABLE, with MyISAM and InnoDB, with and without the
// secondary index), the exact counts of a 100-event run on one thread,
// nothing left after cleanup, and --auto-inc=off --verbosity=1 printing
// only the scripts' own lines.
func TestScriptExpectations(t *testing.T) {
	needPeer(t)
	admin(t, "DROP DATABASE IF EXISTS sb_peer", "DROP DATABASE IF EXISTS sb_wp", "CREATE DATABASE sb_peer", "CREATE DATABASE sb_wp")
	for _, engine := range []string{"myisam", "innodb"} {
		base := []string{"oltp_write_only", "--mysql-storage-engine=" + engine, "--tables=3", "--table-size=1000", "--threads=1"}
		cmd := func(args ...string) []string { return append(append([]string(nil), base...), args...) }
		same(t, cmd("prepare")...)
		sameTables(t, engine, 3)
		same(t, cmd("prewarm")...)
		_, o := same(t, cmd("--events=100", "--time=0", "run")...)
		for _, want := range []string{
			"        read:                            0\n", "        write:                           400\n",
			"        other:                           200\n", "        total:                           600\n",
			"    transactions:                        100    (", "    queries:                             600    (",
			"    ignored errors:                      0      (", "    total number of events:              100\n",
			"    events (avg/stddev):           100.0000/0.00\n",
		} {
			if !strings.Contains(o.stdout, want) {
				t.Errorf("%s: 100 events on one thread: the report lacks %q\n%s", engine, want, o.stdout)
			}
		}
		same(t, cmd("cleanup")...)
		sameTables(t, engine, 0)
		one := []string{"oltp_write_only", "--mysql-storage-engine=" + engine, "--tables=1", "--table-size=1000"}
		same(t, append(append([]string(nil), one...), "--create-secondary=off", "prepare")...)
		sameTables(t, engine+" without the secondary index", 1)
		same(t, append(one, "cleanup")...)
		quiet := append(one, "--auto-inc=off", "--verbosity=1")
		for _, c := range []string{"prepare", "run", "cleanup"} {
			args := append(append([]string(nil), quiet...), "--time=1", c)
			_, o := same(t, args...)
			if c == "prepare" {
				sameTables(t, engine+" --auto-inc=off", 1)
			}
			if c == "run" && o.stdout != "" {
				t.Errorf("%q printed %q; sysbench's test wants nothing", args, o.stdout)
			}
		}
	}
}

// sameTables compares the tables sb_peer and sb_wp have: n of them,
// sbtest1..n, each created alike.
func sameTables(t *testing.T, what string, n int) {
	t.Helper()
	pw, _ := testServer(t).Password()
	db, err := sql.Open("mysql", "root:"+pw+"@unix("+testServer(t).Socket()+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, schema := range []string{"sb_peer", "sb_wp"} {
		var got int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?", schema).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("%s: %s has %d tables; want %d", what, schema, got, n)
		}
	}
	for i := 1; i <= n; i++ {
		var ddl [2]string
		for k, schema := range []string{"sb_peer", "sb_wp"} {
			var name string
			if err := db.QueryRow(fmt.Sprintf("SHOW CREATE TABLE %s.sbtest%d", schema, i)).Scan(&name, &ddl[k]); err != nil {
				t.Fatalf("%s: %s.sbtest%d: %v", what, schema, i, err)
			}
		}
		if ddl[0] != ddl[1] {
			t.Errorf("%s: sbtest%d differs\n--- sysbench\n%s\n--- writepath\n%s", what, i, ddl[0], ddl[1])
		}
	}
}
