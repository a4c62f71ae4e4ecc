package mysqld

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newTestInstance initialises a fresh MariaDB/MySQL datadir in a short temp
// dir and registers Close.
func newTestInstance(t *testing.T, settings ...Setting) *Instance {
	t.Helper()
	needServer(t)
	dir := testDir(t)
	ctx := context.Background()
	in, err := New(ctx, Options{Dir: dir, Settings: settings, StartTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	if err := in.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return in
}

// testDir is a short temporary instance directory the server's account
// can enter (MkdirTemp makes it 0700).
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out  string
		want Version
	}{
		{"/usr/sbin/mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n",
			Version{Flavor: MariaDB, Major: 10, Minor: 11, Patch: 6}},
		{"/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)",
			Version{Flavor: MySQL, Major: 8, Minor: 0, Patch: 36}},
		{"/usr/sbin/mysqld  Ver 8.4.0 for Linux on x86_64 (MySQL Community Server - GPL)",
			Version{Flavor: MySQL, Major: 8, Minor: 4, Patch: 0}},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.out)
		got.Raw = ""
		if err != nil || got != tt.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", tt.out, got, err, tt.want)
		}
	}
	if _, err := ParseVersion("bash 5.2"); !errors.Is(err, ErrUnknownFlavor) {
		t.Errorf("ParseVersion(bash) error = %v; want ErrUnknownFlavor", err)
	}
}

func TestParseSettingAndMerge(t *testing.T) {
	s, err := ParseSetting("innodb_flush_method = O_DIRECT")
	if err != nil || s != (Setting{"innodb_flush_method", "O_DIRECT"}) {
		t.Errorf("ParseSetting = %v, %v", s, err)
	}
	for _, bad := range []string{"", "=1", "a b=1", "[x]=1"} {
		if _, err := ParseSetting(bad); err == nil {
			t.Errorf("ParseSetting(%q) succeeded; want an error", bad)
		}
	}
	got := merge([]Setting{{"port", "1"}, {"max-connections", "10"}},
		[]Setting{{"max_connections", "20"}, {"skip-log-bin", ""}})
	want := "port=1 max_connections=20 skip-log-bin"
	var parts []string
	for _, s := range got {
		parts = append(parts, s.String())
	}
	if strings.Join(parts, " ") != want {
		t.Errorf("merge = %v; want %s", parts, want)
	}
}

// TestLifecycle drives one real server through every state change.
func TestLifecycle(t *testing.T) {
	in := newTestInstance(t, Setting{"innodb_buffer_pool_size", "64M"})
	ctx := context.Background()
	if len(in.Socket()) > maxSunPath {
		t.Fatalf("socket path %q is %d bytes", in.Socket(), len(in.Socket()))
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !in.Running() || in.Ping(ctx) != nil {
		t.Fatalf("after Start: running %v, ping %v", in.Running(), in.Ping(ctx))
	}
	if err := in.Start(ctx); !errors.Is(err, ErrRunning) {
		t.Errorf("second Start error = %v; want ErrRunning", err)
	}
	off := in.ErrorLogSize()
	pid := in.PID()
	if err := in.Kill(); err != nil {
		t.Fatal(err)
	}
	if in.Running() || pidAlive(pid) {
		t.Fatalf("after Kill: running %v, pid %d alive %v", in.Running(), pid, pidAlive(pid))
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	lines, next, err := in.ReadErrorLog(off)
	if err != nil || next <= off || !containsLine(lines, "ready for connections") {
		t.Errorf("ReadErrorLog(%d) after restart = %d lines, next %d, %v; want a ready line", off, len(lines), next, err)
	}
	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Snapshot(ctx, filepath.Join(in.Dir(), "snap")); !errors.Is(err, ErrRunning) {
		t.Errorf("Snapshot of a running server error = %v; want ErrRunning", err)
	}
	if err := in.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if in.Running() {
		t.Fatal("running after Stop")
	}
	if err := in.Stop(ctx); err != nil {
		t.Errorf("second Stop = %v; want nil", err)
	}
	testSnapshotRestore(t, in)
}

// testSnapshotRestore snapshots, damages the datadir, restores and starts.
func testSnapshotRestore(t *testing.T, in *Instance) {
	ctx := context.Background()
	snap := filepath.Join(in.Dir(), "snap")
	if err := in.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(in.DataDir(), "after-snapshot")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := in.Restore(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("file written after the snapshot survived Restore: %v", err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatalf("start after restore: %v", err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if in.Running() {
		t.Fatal("running after Close")
	}
}

func TestBadSettingStartErrorHasLogTail(t *testing.T) {
	in := newTestInstance(t)
	in.SetSettings([]Setting{{"innodb_no_such_option", "1"}})
	start := time.Now()
	err := in.Start(context.Background())
	if err == nil {
		t.Fatal("Start with an unknown option succeeded")
	}
	if !strings.Contains(err.Error(), "innodb_no_such_option") || !errors.Is(err, ErrExited) {
		t.Errorf("Start error = %v; want ErrExited and the log line naming the option", err)
	}
	if time.Since(start) > 30*time.Second || in.Running() {
		t.Errorf("failed start took %v, running %v", time.Since(start), in.Running())
	}
}

func TestOpenAdoptsRunningServer(t *testing.T) {
	in := newTestInstance(t)
	ctx := context.Background()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, Options{Dir: in.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if other.PID() != in.PID() || other.Socket() != in.Socket() || other.Port() != in.Port() {
		t.Fatalf("Open = pid %d %s:%d; want pid %d %s:%d", other.PID(), other.Socket(), other.Port(), in.PID(), in.Socket(), in.Port())
	}
	if err := other.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("server still running after Stop through Open")
	}
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// needServer skips (fails under make test or CI) where no server binary
// is installed.
func needServer(t *testing.T) {
	t.Helper()
	_, err := FindBinary()
	need(t, "a MariaDB or MySQL server", err)
}

// need is internal/testenv.Need, which this package's tests cannot import
// (testenv imports mysqld): skip naming what is missing, or fail under
// make test (WRITEPATH_TEST_ALL=1) or CI.
func need(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("WRITEPATH_TEST_ALL") == "1" || os.Getenv("CI") != "" {
		t.Fatalf("needs %s: %v", what, err)
	}
	t.Skipf("needs %s: %v (make deps installs it; WRITEPATH_TEST_ALL=1 fails instead of skipping)", what, err)
}
