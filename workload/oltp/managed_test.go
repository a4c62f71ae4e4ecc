package oltp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload"
)

// TestManagedServerAppliesCellSettings runs two campaign "cells" of an
// oltp spec that names a managed server, as a campaign submits them
// (prepare, run): the first initialises, prepares and snapshots; the second
// restores the snapshot instead of preparing and restarts the server with
// its own settings; both measure transactions. Each phase stops the server
// it started (issue 13, point 1); the next starts it with the cell's
// settings.
func TestManagedServerAppliesCellSettings(t *testing.T) {
	testenv.MySQLServer(t)
	dataDir := reachableTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	defer stopManaged(t, filepath.Join(dataDir, "srv"))
	for _, flush := range []string{"2", "0"} {
		spec, err := ParseArgs([]string{"--mysqld-dir=srv", "--mysqld-snapshot=snap", "--set", "innodb_buffer_pool_size=64M",
			"--set", "innodb_flush_log_at_trx_commit=" + flush, "--tables=1", "--table-size=200", "--time=1"})
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewFromSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		var progress bytes.Buffer
		env := workload.Env{DataDir: dataDir, Start: time.Now(), Progress: &progress}
		if err := w.Run(ctx, PhasePrepare, env, workload.NewRecorder(env.Start)); err != nil {
			t.Fatalf("cell flush=%s: prepare: %v", flush, err)
		}
		if restored := strings.Contains(progress.String(), "restored"); restored != (flush == "0") {
			t.Errorf("cell flush=%s: prepare restored the snapshot: %v; want only in the second cell", flush, restored)
		}
		rec := workload.NewRecorder(env.Start)
		if err := w.Run(ctx, PhaseRun, env, rec); err != nil {
			t.Fatalf("cell flush=%s: run: %v", flush, err)
		}
		if n := rec.Tick(time.Now()).Ops["trx"].Count(); n == 0 {
			t.Errorf("cell flush=%s: no transactions measured", flush)
		}
		if _, err := os.Stat(filepath.Join(dataDir, "snap")); err != nil {
			t.Errorf("cell flush=%s: no snapshot after prepare: %v", flush, err)
		}
		in, err := mysqld.Open(ctx, mysqld.Options{Dir: filepath.Join(dataDir, "srv"), Detach: true})
		if err != nil {
			t.Fatal(err)
		}
		want := mysqld.Setting{Key: "innodb_flush_log_at_trx_commit", Value: flush}
		if in.Running() || !slices.Contains(in.Settings(), want) {
			t.Errorf("cell flush=%s: server running %v with %v; want it stopped after the phase, last run with %v", flush, in.Running(), in.Settings(), want)
		}
		in.Close()
	}
}

// stopManaged stops the detached server a test left running.
func stopManaged(t *testing.T, dir string) {
	in, err := mysqld.Open(context.Background(), mysqld.Options{Dir: dir})
	if err != nil {
		t.Errorf("open managed server to stop it: %v", err)
		return
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Errorf("stop managed server: %v", err)
	}
	in.Close()
}

// TestManagedServerKeep (issue 13, point 1): --mysqld-keep leaves the
// server running after the phase (and the next phase uses it as it is);
// without it the phase that started the server stops it.
func TestManagedServerKeep(t *testing.T) {
	dataDir := reachableTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(dataDir, "srv")
	defer stopManaged(t, dir)
	for _, keep := range []bool{true, false} {
		args := []string{"--mysqld-dir=srv", "--set", "innodb_buffer_pool_size=64M", "--tables=1", "--table-size=100", "--time=1"}
		if keep {
			args = append(args, "--mysqld-keep")
		}
		spec, err := ParseArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := NewFromSpec(spec)
		env := workload.Env{DataDir: dataDir, Start: time.Now()}
		for _, phase := range []string{PhaseCleanup, PhasePrepare} {
			if err := w.Run(ctx, phase, env, workload.NewRecorder(env.Start)); err != nil {
				t.Fatalf("keep %v: %s: %v", keep, phase, err)
			}
		}
		in, err := mysqld.Open(ctx, mysqld.Options{Dir: dir, Detach: true})
		if err != nil {
			t.Fatal(err)
		}
		if in.Running() != keep {
			t.Errorf("--mysqld-keep %v: server running after prepare: %v", keep, in.Running())
		}
		in.Close()
	}
}
