package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage: docs/ARCHITECTURE.md's package table
// has a row for every package `go list ./...` prints and for nothing else,
// so a newcomer's map never misses a package nor names a gone one.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllSubmatch(doc, -1) {
		rows = append(rows, string(m[1]))
	}
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(bytes.TrimSpace(out))) {
		pkgs = append(pkgs, strings.TrimPrefix(p, mod))
	}
	for _, p := range pkgs {
		if !slices.Contains(rows, p) {
			t.Errorf("docs/ARCHITECTURE.md has no row for package %s: add one (a sentence or two)", p)
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if !slices.Contains(pkgs, r) {
			t.Errorf("docs/ARCHITECTURE.md has a row for %s, which go list ./... does not print", r)
		}
		if seen[r] {
			t.Errorf("docs/ARCHITECTURE.md names %s twice", r)
		}
		seen[r] = true
	}
}
