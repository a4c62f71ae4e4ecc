package crash

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/writepath/writepath/workload/crash/innodbpage"
)

// Verdict is what the restart after the crash said about the data: the
// server's own start-up lines and CHECK TABLE.
type Verdict struct {
	// RefusedStart: the server did not come up after the crash.
	RefusedStart bool `json:"refused_start"`
	// CheckFailed: CHECK TABLE found a damaged table.
	CheckFailed bool `json:"check_failed"`
	// Corrupt are the restart's error-log lines that speak of corruption.
	Corrupt []string `json:"corrupt,omitempty"`
	// Doublewrite are its lines about the doublewrite buffer (pages
	// restored from it).
	Doublewrite []string `json:"doublewrite,omitempty"`
	// Errors are its [ERROR] lines.
	Errors []string `json:"errors,omitempty"`
	// Lines counts the restart's lines of each list before the bound.
	CorruptLines     int `json:"corrupt_lines"`
	DoublewriteLines int `json:"doublewrite_lines"`
	ErrorLines       int `json:"error_lines"`
	// FirstPageCorrupt are the files the server could not open because it
	// found their first page (page 0) corrupt, as it names them
	// ("./sbtest/sbtest1.ibd").
	FirstPageCorrupt []string `json:"first_page_corrupt,omitempty"`
	// Page0Unrestored are those of them whose page 0 the cut tore while
	// the durable doublewrite buffer held a usable copy of it: MariaDB
	// 10.11 should have restored the page and did not (see KnownGap).
	Page0Unrestored []string `json:"page0_unrestored,omitempty"`
	// KnownGap names the known server gap that explains all of the damage
	// this round found, "" when there is none or it does not explain all.
	KnownGap string `json:"known_gap,omitempty"`
}

// GapPage0NotRestored: MariaDB 10.11 does not restore a torn page 0 of a
// tablespace from the doublewrite buffer, although the buffer holds a
// usable copy, unless something opened the file earlier in the recovery
// (an extension of the file since the checkpoint does):
// buf_dblwr_t::recover() gets the tablespace with fil_space_t::get(),
// which opens the file through fil_node_t::read_page0() without the
// doublewrite copy; that fails with "The first page of file ... is
// corrupted", and the copy is set aside unused. The table is then
// unreadable ("Table ... is corrupted"). docs/POWERLOSS.md has the
// evidence and a reproduction without the layer.
const GapPage0NotRestored = "mariadb: torn page 0 not restored from a usable doublewrite copy"

// Damaged reports whether the crash damaged the data as the server or
// CHECK TABLE see it.
func (v Verdict) Damaged() bool {
	return v.RefusedStart || v.CheckFailed || len(v.Corrupt) > 0
}

// maxVerdictLines bounds each list: a damaged tablespace can log
// thousands of lines.
const maxVerdictLines = 20

// scanVerdict sorts the restart's error-log lines.
func scanVerdict(v *Verdict, lines []string) {
	for _, l := range lines {
		if m := firstPageRE.FindStringSubmatch(l); m != nil && !contains(v.FirstPageCorrupt, m[1]) {
			v.FirstPageCorrupt = appendBounded(v.FirstPageCorrupt, m[1])
		}
		low := strings.ToLower(l)
		if strings.Contains(low, "corrupt") {
			v.Corrupt = appendBounded(v.Corrupt, l)
			v.CorruptLines++
		}
		if strings.Contains(low, "doublewrite") {
			v.Doublewrite = appendBounded(v.Doublewrite, l)
			v.DoublewriteLines++
		}
		if strings.Contains(l, "[ERROR]") {
			v.Errors = appendBounded(v.Errors, l)
			v.ErrorLines++
		}
	}
}

func appendBounded(s []string, l string) []string {
	if len(s) >= maxVerdictLines {
		return s
	}
	return append(s, l)
}

// The lines of a first page that failed its check when the file was
// opened (fil_node_t::read_page0) and of a table InnoDB then refuses.
var (
	firstPageRE    = regexp.MustCompile(`InnoDB: The first page of file (.+) is corrupted`)
	tableCorruptRE = regexp.MustCompile("Table `([^`]+)`\\.`([^`]+)` is corrupted")
)

func contains(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

// explainDamage sets Page0Unrestored and, when they explain every sign of
// damage of the round, KnownGap. The signs are: corruption lines of the
// restart's log (lines), tables failing CHECK TABLE, a refused start or
// a failed round. They are explained when each corruption line is the
// first-page line of such a file or the server's refusal of that file's
// table, each failing table is one of theirs, and the server started and
// the round completed. datadir resolves the server's "./db/t.ibd" names;
// db is the schema of the tables checked.
func explainDamage(rr *RoundResult, lines []string, datadir, db string) {
	v := &rr.Verdict
	if rr.Cut == nil || len(v.FirstPageCorrupt) == 0 {
		return
	}
	restorable := map[string]bool{}
	for _, tp := range rr.Cut.TornPages {
		if tp.Page == 0 && tp.OnDisk == innodbpage.Corrupt && tp.Copy && tp.CopyUsable {
			restorable[filepath.Clean(tp.Path)] = true
		}
	}
	unrestored, tables := map[string]bool{}, map[string]bool{}
	for _, name := range v.FirstPageCorrupt {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(datadir, path)
		}
		if !restorable[filepath.Clean(path)] {
			continue
		}
		v.Page0Unrestored = append(v.Page0Unrestored, name)
		unrestored[name] = true
		if rel, err := filepath.Rel(datadir, path); err == nil && filepath.Dir(rel) == db && strings.HasSuffix(rel, ".ibd") {
			tables[strings.TrimSuffix(filepath.Base(rel), ".ibd")] = true
		}
	}
	if len(unrestored) == 0 || v.RefusedStart || rr.Failed {
		return
	}
	for _, l := range lines {
		if !strings.Contains(strings.ToLower(l), "corrupt") {
			continue
		}
		if m := firstPageRE.FindStringSubmatch(l); m != nil && unrestored[m[1]] {
			continue
		}
		if m := tableCorruptRE.FindStringSubmatch(l); m != nil && m[1] == db && tables[m[2]] {
			continue
		}
		return // a corruption line it does not explain
	}
	for _, t := range rr.Tables {
		if !t.OK && !tables[t.Table] {
			return
		}
	}
	v.KnownGap = GapPage0NotRestored
}
