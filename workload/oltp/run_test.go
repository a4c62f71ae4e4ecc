package oltp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// comStatus reads the server's statement counters.
func comStatus(t *testing.T, c *conn) map[string]int64 {
	t.Helper()
	rows, err := c.queryStrings("SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('COM_BEGIN','COM_COMMIT','COM_UPDATE','COM_DELETE','COM_INSERT','COM_ROLLBACK','COM_STMT_EXECUTE','COM_STMT_PREPARE','COM_STMT_CLOSE')")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		k, v, _ := strings.Cut(r, "=")
		var n int64
		for _, ch := range v {
			n = n*10 + int64(ch-'0')
		}
		out[strings.ToLower(k)] = n
	}
	return out
}

// TestTransactionMix checks the statements per transaction on the server
// side, from its Com_* counters: one BEGIN, two UPDATEs, one DELETE, one
// INSERT and one COMMIT, all six as prepared statements (as sysbench), or
// all six as text with --db-ps-mode=disable.
func TestTransactionMix(t *testing.T) {
	for _, mode := range []struct {
		name           string
		text, compress bool
		executes       int64 // COM_STMT_EXECUTE per statement
	}{{"prepared", false, false, 1}, {"text", true, false, 0}, {"prepared compressed", false, true, 1}, {"text compressed", true, true, 0}} {
		t.Run(mode.name, func(t *testing.T) { testTransactionMix(t, mode.text, mode.compress, mode.executes) })
	}
}

func testTransactionMix(t *testing.T, text, compress bool, executes int64) {
	s := testSpec(t, "wp_mix", 3, 2000)
	s.Threads, s.Events, s.TimeSeconds, s.UseTextProtocol = u32p(4), 400, u32p(0), text
	s.MysqlCompression = compress
	o := prepared(t, s)
	admin := adminConn(t, "")
	before := comStatus(t, admin)
	sum, _, err := runFor(t, t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	after := comStatus(t, admin)
	d := func(k string) int64 { return after[k] - before[k] }
	n := sum.Transactions
	if n != 400 {
		t.Fatalf("transactions = %d; want --events=400", n)
	}
	// The admin connection's own status query adds nothing to these. A
	// retried attempt (ignored deadlock) adds at most its own statements
	// and one ROLLBACK.
	e := sum.IgnoredErrors
	want := map[string]int64{"com_begin": n, "com_commit": n, "com_update": 2 * n, "com_delete": n,
		"com_insert": n, "com_stmt_execute": 6 * n * executes, "com_rollback": 0}
	slack := map[string]int64{"com_begin": e, "com_update": 2 * e, "com_delete": e, "com_insert": e,
		"com_stmt_execute": 6 * e * executes, "com_rollback": e}
	for k, w := range want {
		if got := d(k); got < w || got > w+slack[k] {
			t.Errorf("%s delta = %d over %d transactions (%d retried); want %d..%d", k, got, n, e, w, w+slack[k])
		}
	}
	if d("com_rollback") != e {
		t.Errorf("com_rollback delta = %d; want one per ignored error (%d)", d("com_rollback"), e)
	}
	if q := sum.Writes + sum.Other; q < 6*n || q > 6*(n+e) {
		t.Errorf("writes %d + other %d = %d; want 6 per transaction (%d, plus retried statements)", sum.Writes, sum.Other, q, 6*n)
	}
	if sum.Other < 2*n {
		t.Errorf("other = %d; want at least BEGIN+COMMIT per transaction (%d)", sum.Other, 2*n)
	}
	summary := sum.Text()
	for _, sec := range []string{"SQL statistics:", "queries performed:", "transactions:", "General statistics:", "Latency (ms):", "95th percentile:", "Threads fairness:"} {
		if !strings.Contains(summary, sec) {
			t.Errorf("summary lacks %q:\n%s", sec, summary)
		}
	}
	assertRowCounts(t, o)
}

// assertRowCounts checks that every table still holds table-size rows
// (delete+insert of the same id keeps the count).
func assertRowCounts(t *testing.T, o Options) {
	t.Helper()
	c := adminConn(t, o.Conn.DB)
	for n := 1; n <= o.Tables; n++ {
		if got := queryInt(t, c, "SELECT COUNT(*) FROM sbtest"+itoa(n)); got != int64(o.TableSize) {
			t.Errorf("sbtest%d holds %d rows; want %d", n, got, o.TableSize)
		}
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

// TestDeadlockIsRetriedAndCounted forces a real InnoDB deadlock (1213)
// inside a client's transaction, at its commit hook's statement: the
// transaction is rolled back, retried (a new attempt for the hook),
// commits, and the error is counted as ignored.
func TestDeadlockIsRetriedAndCounted(t *testing.T) {
	s := testSpec(t, "wp_deadlock", 2, 1000)
	o := prepared(t, s)
	o.Tables, o.Threads = 1, 1 // the client stays off sbtest2, where the deadlock happens
	other := adminConn(t, o.Conn.DB)
	// The other transaction is heavy, so InnoDB picks the client as victim.
	for _, q := range []string{"BEGIN", "UPDATE sbtest2 SET k=k+1 WHERE id BETWEEN 10 AND 900", "UPDATE sbtest2 SET k=k+1 WHERE id=1"} {
		if _, err := other.exec(q); err != nil {
			t.Fatal(err)
		}
	}
	attempts, acked := 0, 0
	otherDone := make(chan error, 1)
	// The hook's statement locks id 2, then waits for id 1 (it walks the
	// key downwards); the other transaction then asks for id 2: a cycle.
	hook := &CommitHook{SQL: "UPDATE sbtest2 SET k=k+1 WHERE id IN (?, ?) ORDER BY id DESC", Client: func(int) CommitCallbacks {
		return CommitCallbacks{
			Before: func(args []int64) {
				args[0], args[1] = 1, 2
				if attempts++; attempts > 1 {
					return
				}
				go func() {
					time.Sleep(300 * time.Millisecond)
					_, err := other.exec("UPDATE sbtest2 SET k=k+1 WHERE id=2") // closes the cycle
					if err == nil {
						_, err = other.exec("COMMIT")
					}
					otherDone <- err
				}()
			},
			After: func(ok bool, _ error) {
				if ok {
					acked++
				}
			},
		}
	}}
	st, err := startRunState(t.Context(), o, workload.Env{}, workload.NewRecorder(time.Now()), 7, hook)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	c := st.clients[0]
	if err := c.txn(t.Context()); err != nil {
		t.Fatalf("txn = %v; want the deadlock retried", err)
	}
	if err := <-otherDone; err != nil {
		t.Fatalf("the other transaction: %v", err)
	}
	if got := c.th.counts.Errors.Load(); got != 1 || attempts != 2 || acked != 1 {
		t.Errorf("errors %d, attempts %d, acked %d; want 1, 2, 1", got, attempts, acked)
	}
}

// TestReconnectAfterKillAndRestart kills the server mid-run and starts it
// again: the run keeps going, counts reconnects, and ends on time.
func TestReconnectAfterKillAndRestart(t *testing.T) {
	s := testSpec(t, "wp_reconnect", 2, 1000)
	s.Threads, s.TimeSeconds = u32p(4), u32p(5)
	o := prepared(t, s)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		if err := testServer(t).Kill(); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(500 * time.Millisecond)
		if err := testServer(t).Start(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	sum, _, err := runFor(t, t.Context(), o)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("run across a server kill = %v; want it to keep going", err)
	}
	if took > 9*time.Second {
		t.Errorf("--time=5 run took %v", took)
	}
	if sum.Reconnects < 1 || sum.Transactions < 10 {
		t.Errorf("reconnects %d, transactions %d; want >= 1 reconnect and progress", sum.Reconnects, sum.Transactions)
	}
	t.Logf("transactions %d, reconnects %d, ignored errors %d", sum.Transactions, sum.Reconnects, sum.IgnoredErrors)
	if !testServer(t).Running() {
		t.Fatal("server not restarted")
	}
	assertRowCounts(t, o)
}

// TestWorkerShowsReportIntervalLines: a worker's run phase (no Text of
// its own) writes sysbench's --report-interval lines on env.Progress and
// keeps its lines and statistics for the phase summary (JSON).
func TestWorkerShowsReportIntervalLines(t *testing.T) {
	s := testSpec(t, "wp_interval_lines", 1, 500)
	s.TimeSeconds, s.ReportIntervalSeconds = u32p(2), 1
	prepared(t, s)
	w, err := NewFromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	if err := w.Run(t.Context(), PhaseRun, workload.Env{Start: time.Now(), Progress: &progress}, workload.NewRecorder(time.Now())); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "[ 1s ] thds: 1 tps: ") {
		t.Errorf("progress = %q; want the [ 1s ] interval line", progress.String())
	}
	b, _ := w.Summary(PhaseRun)
	var rep PhaseReport
	if err := json.Unmarshal(b, &rep); err != nil || rep.Run == nil || rep.Run.Transactions == 0 || len(rep.Lines) < 3 {
		t.Errorf("summary = %s, %v; want the run's lines and statistics", b, err)
	}
}
