package crash

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// powerArgs are the settings of every power-loss test: a small buffer pool
// and redo log keep InnoDB flushing pages all the time, and
// innodb_flush_method=fsync sends page writes through the page cache (the
// layer), to be made durable by a later fsync, so that a cut lands while
// data pages are in flight.
func powerArgs(dir string, extra ...string) []string {
	args := []string{"--power-loss", "--load-time", "3s", "--dir", dir,
		"--tables=2", "--table-size=2000", "--threads=8",
		"--set", "innodb_buffer_pool_size=6M", "--set", "innodb_log_file_size=16M",
		"--set", "innodb_flush_method=fsync"}
	return append(args, extra...)
}

// TestPowerLossDurableWithFsync: trx_commit=1 with doublewrite on survives
// a power cut: nothing acknowledged is lost and the server recovers.
func TestPowerLossDurableWithFsync(t *testing.T) {
	dir := sharedPowerDir(t)
	res, err := runCrash(t, powerArgs(dir, "--rounds", "2",
		"--set", "innodb_flush_log_at_trx_commit=1", "--set", "innodb_doublewrite=1")...)
	if err != nil {
		t.Fatalf("crash rounds: %v", err)
	}
	checkPowerResult(t, res, ModePowerLoss, dir)
	if res.Summary.Failed != 0 || res.Summary.LostAcknowledged != 0 || res.Summary.Damaged != 0 {
		t.Fatalf("summary = %+v; want no failed round, nothing lost, nothing damaged", res.Summary)
	}
	for _, rr := range res.Rounds {
		checkRound(t, rr)
		if c := rr.Cut; c == nil || c.Torn || c.LayerWrites == 0 || c.LayerFsyncs == 0 {
			t.Errorf("round %d cut = %+v; want an untorn cut after writes and fsyncs through the layer", rr.Round, c)
		}
	}
}

// TestPowerLossLosesUnsyncedCommits: with trx_commit=2 COMMIT returns
// before the redo log is synced, so a power cut under load loses
// acknowledged commits (kill -9 alone would not). A large buffer pool and
// a long flush timeout keep InnoDB from syncing the log for other reasons;
// still, a cut can land just after a sync the page cleaner asked for while
// the load was starved of CPU (seen once under go test -race ./...: 0 B
// un-synced), so two rounds run and at least one must lose commits.
func TestPowerLossLosesUnsyncedCommits(t *testing.T) {
	dir := sharedPowerDir(t)
	res, err := runCrash(t, powerArgs(dir, "--rounds", "2",
		"--set", "innodb_flush_log_at_trx_commit=2", "--set", "innodb_flush_log_at_timeout=30",
		"--set", "innodb_buffer_pool_size=256M")...)
	if err != nil {
		t.Fatalf("crash rounds: %v", err)
	}
	checkPowerResult(t, res, ModePowerLoss, dir)
	var lost, acked, dirty int64
	for _, rr := range res.Rounds {
		if rr.Failed || rr.Ledger == nil {
			t.Fatalf("round %d = failed %v (%s), ledger %+v; want a restart and a ledger", rr.Round, rr.Failed, rr.Error, rr.Ledger)
		}
		if !rr.TablesOK {
			t.Errorf("round %d: CHECK TABLE = %+v; losing commits must not damage tables", rr.Round, rr.Tables)
		}
		lost, acked = lost+rr.Ledger.LostAcknowledged, acked+rr.Ledger.Acknowledged
		if rr.Cut != nil {
			dirty += rr.Cut.DirtyRedoBytes
		}
		t.Logf("round %d: lost %d of %d acknowledged commits; %v", rr.Round, rr.Ledger.LostAcknowledged, rr.Ledger.Acknowledged, rr.Cut)
	}
	if lost == 0 || dirty == 0 {
		t.Fatalf("lost %d of %d acknowledged commits, %d B of un-synced redo dropped over %d rounds; want commits lost to the cut", lost, acked, dirty, len(res.Rounds))
	}
}

// maxTornRuns bounds the runs a torn test makes until a cut tears data
// pages: whether InnoDB has page writes in flight at the kill is timing.
const maxTornRuns = 3

// tornRounds runs torn power-loss rounds until some round is enough for
// the test (tornData, tornCopied), and returns every round (and how each
// run went).
func tornRounds(t *testing.T, doublewrite string, enough func(RoundResult) bool) ([]RoundResult, []error) {
	t.Helper()
	dir := sharedPowerDir(t)
	var rounds []RoundResult
	var errs []error
	for run := 1; run <= maxTornRuns; run++ {
		res, err := runCrash(t, powerArgs(dir, "--rounds", "2", "--torn-writes", "--cut-wait", "5s",
			"--set", "innodb_flush_log_at_trx_commit=1", "--set", "innodb_doublewrite="+doublewrite)...)
		checkPowerResult(t, res, ModePowerLossTorn, dir)
		rounds, errs = append(rounds, res.Rounds...), append(errs, err)
		if slices.ContainsFunc(res.Rounds, enough) {
			return rounds, errs
		}
	}
	t.Fatalf("no cut tore what the test needs in %d runs of 2 rounds", maxTornRuns)
	return nil, nil
}

// tornData: the cut tore a write to a tablespace.
func tornData(rr RoundResult) bool { return rr.Cut != nil && rr.Cut.DataTornWrites > 0 }

// tornCopied: the cut tore a page that the durable doublewrite buffer holds
// a usable copy of, so recovery has a page to restore from it. (Pages
// InnoDB writes without the doublewrite buffer, freshly initialised ones
// that redo rebuilds, can be torn too: under load, in CI, a cut once tore
// only such pages.)
func tornCopied(rr RoundResult) bool {
	return rr.Cut != nil && slices.ContainsFunc(rr.Cut.TornPages, func(p TornPage) bool { return p.CopyUsable })
}

// TestTornPagesWithoutDoublewrite: with doublewrite off, a torn data page
// is detected: the server refuses to start, CHECK TABLE fails, or the log
// reports corruption.
func TestTornPagesWithoutDoublewrite(t *testing.T) {
	rounds, _ := tornRounds(t, "0", tornData)
	torn, damaged := 0, 0
	for _, rr := range rounds {
		t.Logf("round %d: %d torn tablespace writes, %d in ibdata; refused start %v, CHECK TABLE failed %v, %d corruption line(s)",
			rr.Round, rr.Cut.DataTornWrites, rr.Cut.SystemTornWrites, rr.Verdict.RefusedStart, rr.Verdict.CheckFailed, rr.Verdict.CorruptLines)
		if rr.Cut.DataTornWrites == 0 {
			continue
		}
		torn++
		if rr.Verdict.Damaged() {
			damaged++
		}
	}
	if damaged == 0 {
		t.Fatalf("%d round(s) tore data pages with doublewrite off and none was detected as damaged", torn)
	}
}

// TestTornPagesWithDoublewrite: with doublewrite on, the same cuts recover:
// every round restarts and loses no acknowledged commit, and there is no
// damage, except for one known
// gap of MariaDB 10.11, recognised from its cause: the cut tore page 0 of
// a tablespace while the durable doublewrite buffer held a usable copy of
// it, the server reported that first page corrupt instead of restoring it,
// and nothing else is damaged (GapPage0NotRestored; reproduced without
// the layer by TestMariaDBTornPage0NotRestored). Any other damage fails.
func TestTornPagesWithDoublewrite(t *testing.T) {
	rounds, errs := tornRounds(t, "1", tornCopied)
	for _, err := range errs {
		if err != nil {
			t.Errorf("crash rounds: %v", err)
		}
	}
	restored := 0
	for _, rr := range rounds {
		t.Logf("round %d: %d torn tablespace writes, %d in ibdata; %d doublewrite line(s); ledger %+v",
			rr.Round, rr.Cut.DataTornWrites, rr.Cut.SystemTornWrites, rr.Verdict.DoublewriteLines, rr.Ledger)
		for _, tp := range rr.Cut.TornPages {
			t.Logf("round %d torn page: %s", rr.Round, tp)
		}
		if rr.Cut.InspectError != "" {
			t.Errorf("round %d: torn pages not inspected: %s", rr.Round, rr.Cut.InspectError)
		}
		restored += rr.Verdict.DoublewriteLines
		if rr.Failed || rr.Verdict.RefusedStart || rr.Ledger == nil || rr.Ledger.LostAcknowledged != 0 {
			t.Errorf("round %d (%d torn tablespace writes): failed %v %s, verdict %+v, ledger %+v; want a restart that loses nothing",
				rr.Round, rr.Cut.DataTornWrites, rr.Failed, rr.Error, rr.Verdict, rr.Ledger)
		}
		if !rr.Verdict.Damaged() && rr.TablesOK {
			continue
		}
		if rr.Verdict.KnownGap != GapPage0NotRestored {
			t.Errorf("round %d: damage after a torn cut with doublewrite on that the known gap does not explain: verdict %+v, tables %+v, torn pages %+v",
				rr.Round, rr.Verdict, rr.Tables, rr.Cut.TornPages)
			continue
		}
		t.Logf("KNOWN GAP round %d: %s: %v (the cut tore page 0 while the doublewrite buffer held a usable copy; the server did not restore it)",
			rr.Round, rr.Verdict.KnownGap, rr.Verdict.Page0Unrestored)
	}
	// Not a failure: a torn page whose redo re-creates it (MariaDB's
	// page-initialising records) is rebuilt without reading it, so a round
	// can tear pages the buffer holds and recover cleanly with no restore
	// logged (CI saw 7 such pages in one round, tables OK, nothing lost).
	// The claim held above is the outcome: nothing lost, no damage the
	// known gap does not explain.
	if restored == 0 {
		t.Logf("no round logged a page restored from the doublewrite buffer (redo rebuilt the torn pages)")
	}
}

// checkPowerResult checks what every power-loss result must say, and
// that the run left no mount and no server behind.
func checkPowerResult(t *testing.T, res Result, mode, dir string) {
	t.Helper()
	if res.Mode != mode || !strings.Contains(res.Note, "fsync durability") || !strings.Contains(res.Note, "FUSE") {
		t.Errorf("mode %q, note %q; want %s and a note on durability and the FUSE layer", res.Mode, res.Note, mode)
	}
	for _, rr := range res.Rounds {
		if rr.Cut == nil && !rr.Failed {
			t.Errorf("round %d has no cut report", rr.Round)
		}
		if rr.Cut != nil && rr.Cut.Torn != (mode == ModePowerLossTorn) {
			t.Errorf("round %d cut torn = %v in mode %s", rr.Round, rr.Cut.Torn, mode)
		}
	}
	if mode == ModePowerLossTorn && res.TornSeed == 0 {
		t.Errorf("torn run without a recorded seed")
	}
	if m := mountsUnder(t, dir); len(m) > 0 {
		t.Errorf("mounts left under %s: %v", dir, m)
	}
	if pids := serversIn(t, dir); len(pids) > 0 {
		t.Errorf("servers of %s still running: pids %v", dir, pids)
	}
}

// mountsUnder lists the mount points below dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.HasPrefix(fields[4], filepath.Clean(dir)+"/") {
			out = append(out, fields[4])
		}
	}
	return out
}
