package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/testenv"
)

// TestGeneratedBPFFresh recompiles telemetry/blocktrace's eBPF programs
// with the pinned bpf2go, as its go:generate line says, into a temporary
// directory and fails when the committed object or Go differ: nobody edits
// them by hand or forgets `make bpf`.
func TestGeneratedBPFFresh(t *testing.T) {
	root := repoRoot(t)
	pkg := filepath.Join(root, "telemetry", "blocktrace")
	gen, err := os.ReadFile(filepath.Join(pkg, "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^//go:generate bpf2go (.*)$`).FindSubmatch(gen)
	if m == nil {
		t.Fatal("gen.go: no //go:generate bpf2go line")
	}
	bpf2go := testenv.Binary(t, "bpf2go (make tools, then .tools/bin on PATH)", "bpf2go")
	tmp := t.TempDir()
	args := append([]string{"-output-dir", tmp}, splitArgs(string(m[1]))...)
	cmd := exec.Command(bpf2go, args...)
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bpf2go %v: %v\n%s", args, err, out)
	}
	for _, f := range []string{"trace_bpfel.go", "trace_bpfel.o"} {
		want, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatalf("bpf2go made no %s: %v", f, err)
		}
		got, err := os.ReadFile(filepath.Join(pkg, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("telemetry/blocktrace/%s is stale or missing; run make bpf", f)
		}
	}
	// bpf2go is cilium/ebpf's own command: its pin must be the library's.
	mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	gomod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	pin := regexp.MustCompile(`(?m)^BPF2GO_VERSION := (\S+)$`).FindSubmatch(mk)
	if pin == nil || !bytes.Contains(gomod, []byte("github.com/cilium/ebpf "+string(pin[1]))) {
		t.Errorf("Makefile BPF2GO_VERSION %q is not go.mod's github.com/cilium/ebpf version", pin)
	}
}

// splitArgs splits a go:generate line as go generate does: on spaces,
// with double-quoted words kept whole.
func splitArgs(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return append(out, s[1:])
			}
			out = append(out, s[1:end+1])
			s = s[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, w)
		s = rest
	}
	return out
}
