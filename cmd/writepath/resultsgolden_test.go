package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden outputs of TestResultsGolden")

// goldenDir holds a store written by the code before package results
// (internal/fabrictest TestMakeGoldenStore) and what the readers of that
// code printed from it.
const goldenDir = "testdata/results-golden"

type goldenIDs struct{ A, B, Pruned, Campaign string }

// goldenCommand is one reader's invocation and its golden file; a .json
// golden is compared as JSON values (protojson's spacing is random).
type goldenCommand struct {
	file string
	args []string
}

func goldenCommands(ids goldenIDs) []goldenCommand {
	return []goldenCommand{
		{"show-a.txt", []string{"runs", "show", ids.A}},
		{"show-a.json", []string{"runs", "show", ids.A, "--json"}},
		{"show-pruned.txt", []string{"runs", "show", ids.Pruned}},
		{"show-pruned.json", []string{"runs", "show", ids.Pruned, "--json"}},
		{"hgrm-a-write.hgrm", []string{"runs", "hgrm", ids.A}},
		{"hgrm-a-fsync-worker-2.hgrm", []string{"runs", "hgrm", ids.A, "--op", "fsync", "--worker", "worker-2"}},
		{"hgrm-a-run-write-worker-3.hgrm", []string{"runs", "hgrm", ids.A, "--phase", "run", "--worker", "worker-3"}},
		{"hgrm-pruned-write.hgrm", []string{"runs", "hgrm", ids.Pruned}},
		{"compare-a-b.txt", []string{"runs", "compare", ids.A, ids.B}},
		{"campaign-table.txt", []string{"campaign", "show", ids.Campaign}},
		{"campaign-table.json", []string{"campaign", "show", ids.Campaign, "--format", "json"}},
		{"report-a.json", []string{"report", ids.A}},
		{"report-pruned.json", []string{"report", ids.Pruned}},
		{"report-campaign.json", []string{"report", ids.Campaign}},
	}
}

// TestResultsGolden: from a store written before package results, every
// reader (`runs show`, `--json`, `runs hgrm`, `runs compare`, the campaign
// table, the report's data) prints what the code of that time printed,
// reading the file and reading through a coordinator serving it.
func TestResultsGolden(t *testing.T) {
	var ids goldenIDs
	b, err := os.ReadFile(filepath.Join(goldenDir, "ids.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ids); err != nil {
		t.Fatal(err)
	}
	goldens, _ := filepath.Abs(goldenDir)
	dir := t.TempDir()
	db := filepath.Join(dir, "store.db")
	copyFile(t, filepath.Join(goldens, "store.db"), db)
	for _, c := range goldenCommands(ids) {
		t.Run("file/"+c.file, func(t *testing.T) {
			got := goldenOutput(t, dir, c, "--db", db)
			path := filepath.Join(goldens, c.file)
			if *updateGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			compareGolden(t, path, got)
		})
	}
	if *updateGolden {
		return
	}
	// A coordinator as `writepath coordinator` serves it (the embedded
	// fabric's socket admits its own process's calls only).
	f := serveCoordinatorOn(t, serveFlags{}, db)
	for _, c := range goldenCommands(ids) {
		t.Run("coordinator/"+c.file, func(t *testing.T) {
			compareGolden(t, filepath.Join(goldens, c.file), goldenOutput(t, dir, c, "--coordinator", f.addr))
		})
	}
}

// goldenOutput runs c with the source flags and returns what it printed
// (for a report, the data the page draws).
func goldenOutput(t *testing.T, dir string, c goldenCommand, source ...string) []byte {
	t.Helper()
	args := append(append([]string(nil), c.args...), source...)
	html := filepath.Join(dir, "report.html")
	if c.args[0] == "report" {
		args = append(args, "-o", html)
	}
	out, errOut, err := runCLI(t, dir, args...)
	if err != nil {
		t.Fatalf("writepath %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	if c.args[0] != "report" {
		return []byte(out)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("report %s: no data block", c.args[1])
	}
	var v any
	if err := json.Unmarshal(m[1], &v); err != nil {
		t.Fatalf("report %s: data: %v", c.args[1], err)
	}
	b, _ := json.MarshalIndent(v, "", " ")
	return append(b, '\n')
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".json") {
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, got)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			gb, _ := json.MarshalIndent(g, "", " ")
			t.Errorf("%s differs from the golden:\n got: %s\nwant: %s", filepath.Base(path), firstDiff(gb, want), firstDiff(want, gb))
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden:\n got:\n%s\nwant:\n%s", filepath.Base(path), got, want)
	}
}

// firstDiff is a's text around its first difference from b.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo, hi := max(0, i-200), min(len(a), i+200)
	return string(a[lo:hi])
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
