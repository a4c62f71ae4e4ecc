package oltp

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
)

// sysbench runs Debian's sysbench 1.0.20 oltp_write_only against the test
// server with o's tables.
func sysbench(t *testing.T, o Options, command string, extra ...string) string {
	t.Helper()
	bin := testenv.Sysbench(t)
	args := append([]string{"oltp_write_only", "--db-driver=mysql",
		"--mysql-socket=" + o.Conn.Socket, "--mysql-user=" + o.Conn.User, "--mysql-password=" + o.Conn.Password, "--mysql-db=" + o.Conn.DB,
		"--tables=" + strconv.Itoa(o.Tables), "--table-size=" + strconv.Itoa(o.TableSize)}, extra...)
	args = append(args, command)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil || strings.Contains(string(out), "FATAL") || strings.Contains(string(out), "ALERT") {
		t.Fatalf("sysbench %s: %v\n%s", command, err, out)
	}
	return string(out)
}

// TestSysbenchRunsOnWritepathTables: tables prepared by writepath are run
// by sysbench without error, and the row counts stay.
func TestSysbenchRunsOnWritepathTables(t *testing.T) {
	o := prepared(t, testSpec(t, "wp_compat1", 2, 2000))
	out := sysbench(t, o, "run", "--threads=2", "--time=2")
	if !strings.Contains(out, "transactions:") {
		t.Fatalf("sysbench run printed no summary:\n%s", out)
	}
	assertRowCounts(t, o)
}

// TestWritepathRunsOnSysbenchTables: writepath runs on tables that sysbench
// prepared, and the row counts stay.
func TestWritepathRunsOnSysbenchTables(t *testing.T) {
	s := testSpec(t, "wp_compat2", 2, 2000)
	s.Threads, s.TimeSeconds = u32p(2), u32p(2)
	o := mustOptions(t, s)
	admin := adminConn(t, "")
	for _, q := range []string{"DROP DATABASE IF EXISTS wp_compat2", "CREATE DATABASE wp_compat2"} {
		if _, err := admin.exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = admin.exec("DROP DATABASE IF EXISTS wp_compat2") })
	sysbench(t, o, "prepare")
	sum, _, err := runFor(t, t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Transactions < 10 || sum.Reconnects != 0 {
		t.Errorf("transactions %d, reconnects %d on sysbench's tables", sum.Transactions, sum.Reconnects)
	}
	assertRowCounts(t, o)
	if err := Cleanup(t.Context(), o, envQuiet()); err != nil {
		t.Fatal(err)
	}
}

// TestComMixMatchesSysbench: the server counts the same statements
// (Com_* deltas) for writepath's run as for sysbench 1.0.20's, both on
// the same tables with the same --events on one thread (no deadlocks to
// retry), with --mysql-compression off and on.
func TestComMixMatchesSysbench(t *testing.T) {
	for _, compress := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[compress]
		t.Run("compression="+name, func(t *testing.T) {
			s := testSpec(t, "wp_commix", 2, 1000)
			s.Threads, s.Events, s.TimeSeconds, s.MysqlCompression = u32p(1), 200, u32p(0), compress
			o := prepared(t, s)
			admin := adminConn(t, "")
			bytesIn := func() int64 {
				return queryInt(t, admin, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'BYTES_RECEIVED'")
			}
			before, b0 := comStatus(t, admin), bytesIn()
			sysbench(t, o, "run", "--threads=1", "--events=200", "--time=0", "--mysql-compression="+name)
			mid, b1 := comStatus(t, admin), bytesIn()
			sum, _, err := runFor(t, t.Context(), o)
			if err != nil || sum.Transactions != 200 {
				t.Fatalf("writepath run: %v, %d transactions", err, sum.Transactions)
			}
			after, b2 := comStatus(t, admin), bytesIn()
			for k := range after {
				if sb, wp := mid[k]-before[k], after[k]-mid[k]; sb != wp {
					t.Errorf("%s: sysbench %d, writepath %d", k, sb, wp)
				}
			}
			t.Logf("compression=%s: bytes received by the server: sysbench %d, writepath %d", name, b1-b0, b2-b1)
		})
	}
}
