package crash

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/workload"
)

// newTestDir is a short temporary instance directory (the server's Unix
// socket path must fit 107 bytes).
func newTestDir(t *testing.T) string {
	t.Helper()
	testenv.MySQLServer(t)
	dir, err := os.MkdirTemp("", "wp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o711) // the server's account must enter it
	return dir
}

// runCrash builds a spec from CLI arguments, as `writepath crash` does,
// and runs its rounds phase through the registry.
func runCrash(t *testing.T, args ...string) (Result, error) {
	t.Helper()
	b, err := FromArgs(args)
	if err != nil {
		t.Fatalf("FromArgs(%q): %v", args, err)
	}
	m, ok := workload.ByName("crash")
	if !ok || m.Kind != Kind {
		t.Fatalf("crash kind not registered")
	}
	w, err := m.New(b)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := workload.Env{Progress: testWriter{t}}
	runErr := w.Run(ctx, PhaseRounds, env, workload.NewRecorder(time.Now()))
	sum, err := w.(workload.Summarizer).Summary(PhaseRounds)
	if err != nil {
		t.Fatalf("Summary: %v", err)
	}
	var res Result
	if err := json.Unmarshal(sum, &res); err != nil {
		t.Fatalf("Summary is not a Result: %v", err)
	}
	return res, runErr
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestCrashRoundsMariaDB runs two real rounds on a managed MariaDB:
// recovery is timed from live log markers, and with
// innodb_flush_log_at_trx_commit=1 no acknowledged commit is lost.
func TestCrashRoundsMariaDB(t *testing.T) {
	dir := newTestDir(t)
	res, err := runCrash(t, "--rounds", "2", "--load-time", "3s", "--dir", dir,
		"--tables=2", "--table-size=2000", "--threads=4",
		"--set", "innodb_flush_log_at_trx_commit=1", "--set", "innodb_doublewrite=1",
		"--set", "innodb_buffer_pool_size=32M", "--set", "innodb_log_file_size=16M")
	if err != nil {
		t.Fatalf("crash rounds: %v", err)
	}
	if len(res.Rounds) != 2 || res.Summary.Failed != 0 {
		t.Fatalf("rounds = %d, failed %d; want 2 and 0: %+v", len(res.Rounds), res.Summary.Failed, res.Rounds)
	}
	for _, rr := range res.Rounds {
		checkRound(t, rr)
	}
	if !strings.Contains(res.Note, "page cache intact") {
		t.Errorf("result note = %q; want it to say kill -9 leaves the page cache intact", res.Note)
	}
	if res.Summary.RecoveryMS.Median <= 0 || res.Summary.LostAcknowledged != 0 {
		t.Errorf("summary = %+v; want recovery > 0 and nothing lost", res.Summary)
	}
	if pids := serversIn(t, dir); len(pids) > 0 {
		t.Errorf("servers of %s still running after Run: pids %v", dir, pids)
	}
}

// serversIn lists processes whose command line names dir (a server of
// that instance left running).
func serversIn(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir+"/my.cnf") {
			out = append(out, filepath.Base(filepath.Dir(p)))
		}
	}
	return out
}

func checkRound(t *testing.T, rr RoundResult) {
	t.Helper()
	r, tl := rr.Recovery, rr.Timeline
	if !r.Crash || r.RecoveryStart == nil || r.Ready == nil || r.ProcessStart == nil || r.RedoApplied == nil {
		t.Errorf("round %d markers: crash %v, start %v, recovery %v, redo %v, ready %v; want all",
			rr.Round, r.Crash, r.ProcessStart != nil, r.RecoveryStart != nil, r.RedoApplied != nil, r.Ready != nil)
	}
	if len(r.Events) == 0 || r.EndLSN == 0 {
		t.Errorf("round %d: %d events, end LSN %d; want the matched lines stored", rr.Round, len(r.Events), r.EndLSN)
	}
	// Recovery can take 0 ms: with little redo to apply, its first marker
	// and ready reach the live tail in one read (seen after a power cut
	// that dropped no redo).
	if tl.RecoveryMS < 0 || tl.StartToQueryMS <= 0 || tl.KillToCommitMS <= 0 {
		t.Errorf("round %d timeline = %+v; want recovery >= 0, start->query and kill->commit > 0", rr.Round, tl)
	}
	if rr.Load.Transactions == 0 || rr.LastSample == nil {
		t.Errorf("round %d: %d transactions, LSN sample %v; want load and samples", rr.Round, rr.Load.Transactions, rr.LastSample)
	}
	l := rr.Ledger
	if l == nil || l.Acknowledged == 0 || l.LostAcknowledged != 0 || l.Unknown != 0 {
		t.Errorf("round %d ledger = %+v; want acknowledged > 0, none lost, none unknown", rr.Round, l)
	}
	if !rr.TablesOK || len(rr.Tables) < 4 {
		t.Errorf("round %d CHECK TABLE = %+v; want sbtest1, sbtest2, ledger and probe OK", rr.Round, rr.Tables)
	}
}

// TestCrashBadSettingShowsLogTail: a setting the server rejects fails the
// run with the server's own words from the error log.
func TestCrashBadSettingShowsLogTail(t *testing.T) {
	dir := newTestDir(t)
	_, err := runCrash(t, "--rounds", "1", "--load-time", "1s", "--dir", dir,
		"--tables=1", "--table-size=100", "--set", "innodb_flush_method=bogus")
	if err == nil {
		t.Fatal("crash with innodb_flush_method=bogus succeeded; want a failed start")
	}
	if msg := err.Error(); !strings.Contains(msg, "bogus") || !strings.Contains(msg, "error log") {
		t.Errorf("error = %v; want the error-log tail naming the bad value", err)
	}
}

func TestParseArgs(t *testing.T) {
	spec, err := parseArgs([]string{"--rounds=5", "--load-time", "20s", "--kill-at", "5s-15s",
		"--threads", "8", "--set", "innodb_buffer_pool_size=1G", "--drop-caches", "--tables=4"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.GetRounds() != 5 || spec.GetLoadTimeMs() != 20000 || spec.GetKillAt().GetMinMs() != 5000 ||
		spec.GetKillAt().GetMaxMs() != 15000 || spec.GetKillAt().GetSeed() == 0 || !spec.GetDropCaches() ||
		spec.GetLoad().GetThreads() != 8 || spec.GetLoad().GetTables() != 4 ||
		len(spec.GetServer().GetSettings()) != 1 {
		t.Errorf("parseArgs = %v", spec)
	}
	b, _ := proto.Marshal(spec)
	if _, err := New(b); err != nil {
		t.Errorf("New(parseArgs(...)) = %v", err)
	}
	for _, bad := range [][]string{{"--kill-at", "30s", "--load-time", "20s"}, {"--rounds", "x"},
		{"--torn-writes"}, {"--torn-seed", "3"}, {"--cut-when-dirty"}, {"--cut-wait", "1s"},
		{"--set", "=1"}, {"--tablez=3"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q) = nil error; want one", bad)
		}
	}
}
