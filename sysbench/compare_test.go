package sysbench

import (
	"database/sql"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestHelpMatchesSysbench: `oltp_write_only help` prints what sysbench
// prints; `--help` lists every option sysbench's does, in its layout.
func TestHelpMatchesSysbench(t *testing.T) {
	needPeer(t)
	for _, args := range [][]string{
		{"oltp_write_only", "help"},
		{"/usr/share/sysbench/oltp_write_only.lua", "help"},
		{"oltp_write_only", "--tables=8", "help"},
	} {
		same(t, args...)
	}
	p, o := peer(t, "", "--help"), ours(t, "", "--help")
	if o.code != 0 || p.code != 0 {
		t.Fatalf("--help: exit %d, sysbench %d", o.code, p.code)
	}
	for _, line := range strings.Split(p.stdout, "\n") {
		if strings.HasPrefix(line, "  --") && !strings.Contains(o.stdout, line+"\n") {
			t.Errorf("--help lacks sysbench's line %q", line)
		}
	}
	if p, o := peer(t, "", "--version"), ours(t, "", "--version"); o.code != 0 || !strings.HasPrefix(o.stdout, strings.TrimSpace(p.stdout)+" ") {
		t.Errorf("--version = %q; want it to start with sysbench's %q", o.stdout, p.stdout)
	}
}

// TestExitsMatchSysbench: bad command lines end as sysbench ends them:
// the same status, the same words on the same stream.
func TestExitsMatchSysbench(t *testing.T) {
	needPeer(t)
	for _, args := range [][]string{
		{"oltp_write_only", "run", "extra"},
		{"oltp_write_only", "--threads=x", "run"},
		{"oltp_write_only", "--report-interval=x", "run"},
		{"oltp_write_only", "--threads=0", "run"},
		{"oltp_write_only", "--threads", "run"},
		{"oltp_write_only", "--forced-shutdown=x", "run"},
		{"oltp_write_only", "--report-checkpoints=a", "run"},
		{"oltp_write_only", "--verbosity=6", "run"},
		{"oltp_write_only", "--percentile=101", "run"},
		{"oltp_write_only", "--percentile=99.9", "run"},
		{"oltp_write_only", "--percentile=0", "--histogram", "run"},
		{"oltp_write_only", "--rand-type=zipf", "run"},
		{"oltp_write_only", "--thread-stack-size=abc", "run"},
		{"oltp_write_only", "--bogus=1", "help"},
		{"oltp_write_only", "--mysql_table_options=x", "help"},
		{"oltp_write_only", "--skip_trx=maybe", "run"},
		{"oltp_write_only", "--histogram=maybe", "run"},
		{"oltp_write_only", "foo"},
		{"nosuchtest", "run"},
		{"--num-threads=2", "--max-time=1", "--max-requests=5", "oltp_write_only", "--tables=x", "help"},
		{"--time=0", "--events=0", "oltp_write_only", "help"},
		// A driver that does not initialize: sysbench's Lua code says which
		// function failed; run fails after its header, in every thread.
		// (Its parallel prepare and prewarm then exit 0; writepath's 1.)
		{"oltp_write_only", "--db-driver=foo", "prepare"},
		{"oltp_write_only", "--db-driver=foo", "cleanup"},
		{"oltp_write_only", "--db-driver=foo", "run"}, // one thread: sysbench's threads interleave (TestDriverInitExits has more)
		{"oltp_write_only", "--db-ps-mode=foo", "--db-driver=foo", "prewarm"},
		{"oltp_write_only", "--db-ps-mode=foo", "run"},
	} {
		same(t, args...)
	}
	// Where sysbench fails deep in its Lua code, writepath refuses at the
	// same point (after the banner, exit 1) and says why.
	for _, args := range [][]string{
		{"oltp_write_only"},
		{"oltp_write_only", "--tables=x", "--time=1", "run"},
	} {
		p, o := peer(t, "sb_peer", args...), ours(t, "sb_wp", args...)
		if o.code != p.code || !strings.Contains(o.stdout, "FATAL: ") || shape(o.stdout)[0] != shape(p.stdout)[0] {
			t.Errorf("%q: writepath\n%v\nsysbench\n%v", args, o, p)
		}
	}
}

// TestCommandsMatchSysbench runs prepare, prewarm, run (events, time,
// intermediate reports, histogram, checkpoints, dry run, compression) and
// cleanup with both, and compares every output line's shape.
func TestCommandsMatchSysbench(t *testing.T) {
	needPeer(t)
	admin(t, "DROP DATABASE IF EXISTS sb_peer", "DROP DATABASE IF EXISTS sb_wp", "CREATE DATABASE sb_peer", "CREATE DATABASE sb_wp")
	base := []string{"oltp_write_only", "--tables=3", "--table-size=1000"}
	cmd := func(args ...string) []string { return append(append([]string(nil), base...), args...) }
	same(t, cmd("--threads=1", "prepare")...)
	same(t, cmd("--threads=1", "prewarm")...)
	sameSorted(t, cmd("--threads=2", "prewarm")...)
	same(t, cmd("--threads=2", "--events=100", "--time=0", "run")...)
	same(t, cmd("--threads=2", "--time=2", "--report-interval=1", "--histogram", "--percentile=99", "run")...)
	same(t, cmd("--time=3", "--report-checkpoints=1,2", "--rand-seed=5", "--validate", "run")...)
	same(t, cmd("--time=1", "--skip_trx", "--verbosity=1", "run")...)
	same(t, cmd("--time=1", "--debug", "--db-debug", "run")...)
	same(t, cmd("--time=1", "--mysql-ssl", "--mysql-ssl-cipher=AES256-SHA", "run")...) // the server has no TLS: plaintext
	same(t, cmd("--events=50", "--time=0", "--verbosity=4", "run")...)
	same(t, cmd("--threads=2", "--events=100", "--time=0", "--mysql-compression=on", "run")...)
	same(t, cmd("--mysql-compression=yes", "run")...) // refused in sysbench's words
	same(t, cmd("--time=1", "--mysql-dry-run", "--percentile=0", "run")...)
	same(t, cmd("--time=3", "--rate=50", "--report-interval=1", "--point_selects=3", "--range_selects=off", "run")...)
	same(t, cmd("cleanup")...)
	// --secondary and --create-secondary=off change only the DDL.
	sameSorted(t, cmd("--secondary", "--create-secondary=off", "--auto-inc=off", "--threads=2", "prepare")...)
	same(t, cmd("--time=1", "run")...)
	same(t, cmd("cleanup")...)
}

// TestRateBeyondReachFails: a --rate the threads cannot keep up with
// fills sysbench's event queue: both say so and exit 1.
func TestRateBeyondReachFails(t *testing.T) {
	needPeer(t)
	admin(t, "DROP DATABASE IF EXISTS sb_peer", "DROP DATABASE IF EXISTS sb_wp", "CREATE DATABASE sb_peer", "CREATE DATABASE sb_wp")
	base := []string{"oltp_write_only", "--tables=1", "--table-size=1000"}
	same(t, append(base, "prepare")...)
	run := append(base, "--time=5", "--rate=2000000", "run")
	p, o := peer(t, "sb_peer", run...), ours(t, "sb_wp", run...)
	if p.code != 1 || o.code != 1 {
		t.Errorf("%q: exit %d, sysbench %d; want 1\n--- sysbench\n%v\n--- writepath\n%v", run, o.code, p.code, p, o)
	}
	const full = "FATAL: The event queue is full"
	if !strings.Contains(o.stdout, full) {
		t.Errorf("%q: stdout does not say %q\n%v", run, full, o)
	}
	// sysbench's event thread logs the line as the process exits; under
	// load (CI, 2 cores) the line is sometimes lost from its piped stdout
	// with the exit status still 1. The shapes are then compared without it.
	if !strings.Contains(p.stdout, full) {
		t.Logf("sysbench's %q line was lost this time (exit %d): comparing the rest", full, p.code)
		o.stdout = dropLines(o.stdout, full)
	}
	sameShape(t, fmt.Sprintf("%q stdout", run), p.stdout, o.stdout)
	sameShape(t, fmt.Sprintf("%q stderr", run), p.stderr, o.stderr)
	same(t, append(base, "cleanup")...)
}

// dropLines removes the lines of s that start with prefix.
func dropLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestForcedShutdown: a transaction still running --forced-shutdown after
// --time (the tables are read-locked) is cut off: the report counts it,
// the exit status is 2, for both. The figures are sysbench's: the BEGIN
// each thread had sent and seen answered counts as "other", the cut-off
// transactions are no events in the totals but one each in the threads'
// fairness, whose execution time averages the finished events (none)
// and deviates by the stopped ones (about --time plus --forced-shutdown).
func TestForcedShutdown(t *testing.T) {
	needPeer(t)
	admin(t, "DROP DATABASE IF EXISTS sb_peer", "DROP DATABASE IF EXISTS sb_wp", "CREATE DATABASE sb_peer", "CREATE DATABASE sb_wp")
	base := []string{"oltp_write_only", "--tables=1", "--table-size=1000"}
	same(t, append(base, "prepare")...)
	run := append(base, "--time=1", "--forced-shutdown=1", "--threads=2", "run")
	unlock := lockFor(t, "sb_peer")
	p := peer(t, "sb_peer", run...)
	unlock()
	unlock = lockFor(t, "sb_wp")
	o := ours(t, "sb_wp", run...)
	unlock()
	if p.code != 2 || o.code != 2 {
		t.Errorf("forced shutdown: exit %d, sysbench %d; want 2\n%v\n%v", o.code, p.code, o, p)
	}
	sameShape(t, "forced shutdown", p.stdout, o.stdout)
	sameCutFigures(t, "forced shutdown", p.stdout, o.stdout)
	same(t, append(base, "cleanup")...)
}

// sameCutFigures fails the test unless a forced shutdown's report has
// sysbench's figures: the same counts and fairness, the execution time's
// deviation (the time the cut-off transactions ran: about 2 s for both)
// give or take the scheduling of a busy machine.
func sameCutFigures(t *testing.T, what, want, got string) {
	t.Helper()
	pf, of := reportFigures(want), reportFigures(got)
	for _, label := range []string{"other:", "total:", "transactions:", "total number of events:",
		"Number of unfinished transactions on forced shutdown:", "events (avg/stddev):", "execution time avg"} {
		if pf[label] == "" || of[label] != pf[label] {
			t.Errorf("%s: %s %q; sysbench %q", what, label, of[label], pf[label])
		}
	}
	ps, _ := strconv.ParseFloat(pf["execution time stddev"], 64)
	os, _ := strconv.ParseFloat(of["execution time stddev"], 64)
	if ps < 1.5 || math.Abs(os-ps) > 0.3 {
		t.Errorf("%s: execution time stddev %q; sysbench %q", what, of["execution time stddev"], pf["execution time stddev"])
	}
	if t.Failed() {
		t.Logf("--- sysbench\n%s--- writepath\n%s", want, got)
	}
}

// reportFigures are a report's figures by their label (the first one a
// line has after it); the execution time's two are "execution time avg"
// and "execution time stddev".
func reportFigures(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		label, rest, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if label == "execution time (avg/stddev)" {
			avg, dev, _ := strings.Cut(f[0], "/")
			m["execution time avg"], m["execution time stddev"] = avg, dev
			continue
		}
		if _, seen := m[label+":"]; !seen {
			m[label+":"] = f[0]
		}
	}
	return m
}

// lockFor read-locks db.sbtest1 until the returned func is called: every
// write to it waits.
func lockFor(t *testing.T, db string) (unlock func()) {
	t.Helper()
	pw, _ := testServer(t).Password()
	c, err := sql.Open("mysql", "root:"+pw+"@unix("+testServer(t).Socket()+")/"+db)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "LOCK TABLES sbtest1 READ"); err != nil {
		t.Fatal(err)
	}
	return func() {
		_, _ = conn.ExecContext(t.Context(), "UNLOCK TABLES")
		conn.Close()
		c.Close()
	}
}

// TestNotes: writepath's own lines (the seed that repeats the run) appear
// only when asked for; sysbench's shape stays as it is otherwise.
func TestNotes(t *testing.T) {
	args := []string{"oltp_write_only", "--mysql-dry-run", "--time=1", "run"}
	var out, errb strings.Builder
	if code := Main(t.Context(), args, Config{Version: "test", Stdout: &out, Stderr: &errb, Notes: true}); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"writepath: random seed ", "    random seed (--rand-seed):"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("with notes, the output lacks %q:\n%s", want, out.String())
		}
	}
	if o := ours(t, "", args...); o.code != 0 || strings.Contains(o.stdout, "random seed") {
		t.Errorf("without notes:\n%v", o)
	}
}

// TestEmptyScriptOnStdin: with no test named sysbench runs the Lua script
// on standard input; an empty one does nothing (banner, exit 0), and so
// does writepath; any other is refused, as is a terminal (no Stdin).
func TestEmptyScriptOnStdin(t *testing.T) {
	needPeer(t)
	p := peer(t, "", "--unknown") // exec's stdin is /dev/null: empty
	for _, tt := range []struct {
		stdin io.Reader
		code  int
	}{
		{strings.NewReader(""), 0},
		{strings.NewReader(" \n\t\n"), 0},
		{strings.NewReader("print('test')\n"), 1},
		{nil, 1},
	} {
		var out, errb strings.Builder
		code := Main(t.Context(), []string{"--unknown"}, Config{Version: "test", Stdin: tt.stdin, Stdout: &out, Stderr: &errb})
		if code != tt.code || errb.Len() != 0 {
			t.Errorf("stdin %v: exit %d, stderr %q; want %d and none", tt.stdin, code, errb.String(), tt.code)
		}
		if tt.code == 0 {
			if p.code != 0 {
				t.Errorf("sysbench exits %d on an empty script\n%v", p.code, p)
			}
			sameShape(t, "empty script", p.stdout, out.String())
		} else if !strings.Contains(out.String(), "FATAL: writepath does not read a Lua script") {
			t.Errorf("stdin %v: %q; want the refusal", tt.stdin, out.String())
		}
	}
}
