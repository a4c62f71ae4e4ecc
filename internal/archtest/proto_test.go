package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/testenv"
)

// TestGeneratedProtoFresh regenerates every .proto into a temporary tree
// with the pinned local plugins and fails when the committed Go differs, so
// nobody edits generated code by hand or forgets `make proto`.
func TestGeneratedProtoFresh(t *testing.T) {
	root := repoRoot(t)
	buf := testenv.Binary(t, "buf (make tools, then .tools/bin on PATH)", "buf")
	tmp := t.TempDir()
	cmd := exec.Command(buf, "generate", "-o", tmp)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate: %v\n%s", err, out)
	}
	generated := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(tmp, "proto"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		generated[rel] = true
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("%s is not committed; run make proto", rel)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run make proto", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A committed .pb.go whose .proto is gone is stale too.
	_ = filepath.WalkDir(filepath.Join(root, "proto"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".pb.go") {
			rel, _ := filepath.Rel(root, p)
			if !generated[rel] {
				t.Errorf("%s has no .proto source; delete it or restore the source", rel)
			}
		}
		return nil
	})
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}
