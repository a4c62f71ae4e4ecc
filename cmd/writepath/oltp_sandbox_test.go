package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/workload"
)

// TestOltpSandboxRunsEveryPhase is what `writepath run oltp` does locally
// without --mysql-* flags: a sandbox server, then prepare, run and cleanup
// through the registry, then the sandbox is gone.
func TestOltpSandboxRunsEveryPhase(t *testing.T) {
	testenv.MySQLServer(t)
	m, ok := workload.ByName("oltp")
	if !ok || m.Local == nil {
		t.Fatal("oltp kind not linked, or without a local setup")
	}
	var out bytes.Buffer
	args, cleanup, err := m.Local(t.Context(), []string{"--time=2", "--threads=2", "--table-size=500"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	cleaned := false
	defer func() {
		if !cleaned {
			cleanup()
		}
	}()
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--mysql-socket=") || !strings.Contains(joined, "--tables=4") || strings.Contains(joined, "--table-size=10000") {
		t.Fatalf("sandbox args = %q", args)
	}
	spec, err := m.FromArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Phases {
		rec := workload.NewRecorder(time.Now())
		if err := w.Run(t.Context(), p.Name, workload.Env{Start: time.Now()}, rec); err != nil {
			t.Fatalf("phase %s: %v", p.Name, err)
		}
	}
	sum, _ := w.(workload.Summarizer).Summary("run")
	if !bytes.Contains(sum, []byte(`"transactions":`)) {
		t.Errorf("run summary = %q", sum)
	}
	var sock string
	for _, a := range args {
		if s, ok := strings.CutPrefix(a, "--mysql-socket="); ok {
			sock = s
		}
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("sandbox socket %q: %v", sock, err)
	}
	cleanup()
	cleaned = true
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("sandbox socket %s still exists after cleanup: %v", sock, err)
	}
	if got, _, _ := m.Local(t.Context(), []string{"--mysql-host=db1"}, &out); strings.Join(got, " ") != "--mysql-host=db1" {
		t.Errorf("with --mysql-host the sandbox changed the args to %q", got)
	}
}
