package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// lookups are how a test finds a tool or server on the machine itself;
// tests ask internal/testenv instead, which skips naming what is missing
// on a bare machine and fails under make test (WRITEPATH_TEST_ALL=1), so
// neither `go test ./...` fails for want of a peer nor make test skips
// one unnoticed.
var lookups = regexp.MustCompile(`exec\.LookPath\(|FindBinary\(\)`)

// lookupExceptions are the test files that may look for themselves, and
// why.
var lookupExceptions = map[string]string{
	// testenv is where the look-ups live.
	"internal/testenv/testenv.go": "the look-ups themselves",
	// mysqld's own tests cannot import testenv (it imports mysqld); their
	// need helper follows the same rule.
	"mysqld/mysqld_test.go":   "mysqld cannot import testenv",
	"mysqld/private_test.go":  "mysqld cannot import testenv",
	"mysqld/settings_test.go": "mysqld cannot import testenv",
	// sh is part of every machine the tests run on; the test checks the
	// guard's resolution of a name, not a dependency.
	"guard/guard_test.go": "sh, not a dependency",
}

// TestNeedsGoThroughTestenv: no test looks a binary or a server up on its
// own (exec.LookPath, mysqld.FindBinary) outside lookupExceptions.
func TestNeedsGoThroughTestenv(t *testing.T) {
	root := repoRoot(t)
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") && !strings.HasPrefix(p, filepath.Join(root, "internal", "testenv")) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if rel == filepath.Join("internal", "archtest", "testneeds_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !lookups.Match(b) {
			return nil
		}
		seen[rel] = true
		if _, ok := lookupExceptions[rel]; !ok {
			t.Errorf("%s looks up a binary or server itself (%s): use internal/testenv (Binary, Fio, Sysbench, MySQLServer, ...), which skips naming it and fails under make test",
				rel, lookups.Find(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range lookupExceptions {
		if !seen[rel] {
			t.Errorf("lookupExceptions names %s, which no longer looks anything up: remove it", rel)
		}
	}
}
