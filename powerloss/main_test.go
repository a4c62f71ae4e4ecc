package powerloss

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The serving side must be its own process. Rather than building the
// writepath binary (whose other commands are other people's work in
// progress), the test binary re-executes itself: with serveEnv set,
// TestMain runs Serve with the same flags powerloss-serve takes.
const serveEnv = "POWERLOSS_TEST_SERVE"

// serverEnv also stops a -race server from sleeping 1 s at exit.
var serverEnv = []string{serveEnv + "=1", "GORACE=atexit_sleep_ms=0"}

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(ServeMain(os.Args[2:], os.Stderr)) // os.Args[1] is the subcommand Mount passes
	}
	os.Exit(m.Run())
}

// env is one mounted layer for a test: backing/ holds the durable state,
// mnt/ is the mount.
type env struct {
	t       *testing.T
	backing string
	mnt     string
	m       *Mounted
	files   []*os.File // closed before a cut
}

// mountEnv creates backing files (name -> content) and mounts over them.
func mountEnv(t *testing.T, files map[string]string) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, backing: filepath.Join(dir, "backing"), mnt: filepath.Join(dir, "mnt")}
	for _, d := range []string{e.backing, e.mnt} {
		must(t, os.Mkdir(d, 0o755))
	}
	for name, content := range files {
		must(t, os.WriteFile(filepath.Join(e.backing, name), []byte(content), 0o644))
	}
	e.start()
	return e
}

func (e *env) start() {
	e.t.Helper()
	exe, err := os.Executable()
	must(e.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := MountConfig(ctx, Config{Exe: exe, Env: serverEnv, Backing: e.backing, Mountpoint: e.mnt})
	must(e.t, err)
	e.m = m
	e.t.Cleanup(func() {
		for _, f := range e.files {
			f.Close()
		}
		if err := m.Close(); err != nil {
			e.t.Errorf("Close: %v", err)
		}
		if ok, _ := mountedAt(e.mnt); ok {
			e.t.Errorf("mount left at %s after Close", e.mnt)
		}
		if _, err := os.Stat(DefaultWorkDir(e.backing)); err == nil {
			e.t.Errorf("work dir left after Close")
		}
	})
}

func (e *env) path(name string) string    { return filepath.Join(e.mnt, name) }
func (e *env) durable(name string) string { return filepath.Join(e.backing, name) }

func (e *env) cut(opts CutOptions) CutReport {
	e.t.Helper()
	for _, f := range e.files {
		f.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := e.m.Cut(ctx, opts)
	must(e.t, err)
	return rep
}

func (e *env) stats() Stats {
	e.t.Helper()
	s, err := e.m.Stats(context.Background())
	must(e.t, err)
	return s
}

// readDurable returns a backing file's content, or "<absent>".
func (e *env) readDurable(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.durable(name))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	must(e.t, err)
	return string(b)
}

func (e *env) exists(name string) bool {
	_, err := os.Lstat(e.durable(name))
	return err == nil
}

// fsyncPath opens name (a file or directory in the mount) and fsyncs it.
func (e *env) fsyncPath(name string) {
	e.t.Helper()
	f, err := os.Open(e.path(name))
	must(e.t, err)
	defer f.Close()
	must(e.t, f.Sync())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
