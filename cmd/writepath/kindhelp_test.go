package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/writepath/writepath/workload"
)

// TestKindHelp: `run KIND --help`, `-h`, `help` and `PHASE help` print the
// kind's own option table (Meta.Help), exit 0 and start nothing: no store,
// no sandbox server, nothing on stderr.
func TestKindHelp(t *testing.T) {
	for _, kind := range []string{"fio", "oltp", "crash"} {
		meta, ok := workload.ByName(kind)
		if !ok || meta.Help == nil {
			t.Fatalf("kind %s has no Meta.Help", kind)
		}
		var want bytes.Buffer
		if err := meta.Help(&want); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {meta.Phases[0].Name, "help"},
			{"--local-workers", "2", "--help"}, {"--rounds=2", "--help"}} {
			dir := t.TempDir()
			stdout, stderr, err := runCLI(t, dir, append([]string{"run", kind}, args...)...)
			if err != nil {
				t.Errorf("run %s %v: %v", kind, args, err)
				continue
			}
			if stdout != want.String() {
				t.Errorf("run %s %v printed %d bytes, not the kind's help (%d bytes)", kind, args, len(stdout), want.Len())
			}
			if stderr != "" {
				t.Errorf("run %s %v wrote to stderr: %q", kind, args, stderr)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("run %s %v left %s in its directory: it started something", kind, args, filepath.Join(dir, ents[0].Name()))
			}
		}
	}
}
