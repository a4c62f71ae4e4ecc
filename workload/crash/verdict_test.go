package crash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writepath/writepath/workload/crash/innodbpage"
)

// page0Log is the restart of MariaDB 10.11.19 over a datadir whose
// sbtest/t1.ibd page 0 was torn while the doublewrite buffer held a usable
// copy of it (reproduced without the layer, docs/POWERLOSS.md).
func page0Log(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "page0", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// page0Round is a round whose cut tore page 0 of datadir/sbtest/t1.ibd.
func page0Round(datadir string, usable bool) RoundResult {
	return RoundResult{
		Cut: &PowerCut{Torn: true, TornPages: []TornPage{{File: "data/sbtest/t1.ibd", Path: filepath.Join(datadir, "sbtest", "t1.ibd"),
			Page: 0, SpaceID: 5, Kept: 8192, OnDisk: innodbpage.Corrupt, Copy: true, CopyLSN: 14743451, CopyUsable: usable}}},
		Tables:   []TableCheck{{Table: "t1", Messages: []string{"Error: Table `sbtest`.`t1` is corrupted."}}, {Table: "wp_ledger", OK: true}},
		TablesOK: false,
	}
}

func TestExplainDamagePage0(t *testing.T) {
	const datadir = "/tmp/exp/t0/data"
	lines := page0Log(t, "mariadb-10.11.19-page0-unrestored.log")
	tests := []struct {
		name   string
		change func(rr *RoundResult, lines []string) []string
		gap    bool
	}{
		{"torn page 0 with a usable copy, not restored", nil, true},
		{"the copy was older than the checkpoint", func(rr *RoundResult, l []string) []string {
			rr.Cut.TornPages[0].CopyUsable = false
			return l
		}, false},
		{"no torn page 0 at all", func(rr *RoundResult, l []string) []string {
			rr.Cut.TornPages[0].Page = 3
			return l
		}, false},
		{"another table failed CHECK TABLE", func(rr *RoundResult, l []string) []string {
			rr.Tables[1].OK = false
			return l
		}, false},
		{"another corruption line", func(rr *RoundResult, l []string) []string {
			return append(l, "2026-11-30 13:11:24 0 [ERROR] InnoDB: Unable to apply log to corrupted page [page id: space=6, page number=3]")
		}, false},
		{"another table refused", func(rr *RoundResult, l []string) []string {
			return append(l, "2026-11-30 13:11:24 4 [ERROR] mariadbd: Table `sbtest`.`t2` is corrupted. Please drop the table and recreate.")
		}, false},
		{"the server refused to start", func(rr *RoundResult, l []string) []string {
			rr.Verdict.RefusedStart = true
			return l
		}, false},
	}
	for _, tt := range tests {
		rr := page0Round(datadir, true)
		l := append([]string(nil), lines...)
		if tt.change != nil {
			l = tt.change(&rr, l)
		}
		scanVerdict(&rr.Verdict, l)
		rr.Verdict.CheckFailed = !rr.TablesOK
		explainDamage(&rr, l, datadir, "sbtest")
		v := rr.Verdict
		if !v.Damaged() || len(v.FirstPageCorrupt) != 1 || v.FirstPageCorrupt[0] != "./sbtest/t1.ibd" {
			t.Errorf("%s: verdict %+v; want damage and the first page of ./sbtest/t1.ibd reported corrupt", tt.name, v)
		}
		if got := v.KnownGap == GapPage0NotRestored; got != tt.gap {
			t.Errorf("%s: known gap %q, page0 unrestored %v; want the gap %v", tt.name, v.KnownGap, v.Page0Unrestored, tt.gap)
		}
	}
}

func TestExplainDamageLeavesCleanRoundsAlone(t *testing.T) {
	rr := page0Round("/d", true)
	rr.Tables[0].OK, rr.TablesOK = true, true
	lines := page0Log(t, "mariadb-10.11.19-page3-restored.log")
	scanVerdict(&rr.Verdict, lines)
	explainDamage(&rr, lines, "/d", "sbtest")
	if v := rr.Verdict; v.Damaged() || v.KnownGap != "" || len(v.FirstPageCorrupt) != 0 || v.DoublewriteLines != 2 {
		t.Errorf("a restart that restored a page from the doublewrite buffer: verdict %+v; want no damage, 2 doublewrite lines", v)
	}
}
