// Package testenv says what a test needs from the machine. A test that
// needs a server, a peer tool or a kernel facility the machine lacks
// skips with one line naming what is missing and how to get it, so that
// `go test ./...` on a bare machine runs every fast test; under `make
// test` (WRITEPATH_TEST_ALL=1) or on CI (CI set) a missing need fails the
// test instead, so nothing is skipped unnoticed there.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/writepath/writepath/mysqld"
)

// AllVar, set to 1, turns every missing need into a failure (make test).
const AllVar = "WRITEPATH_TEST_ALL"

// Strict reports whether missing needs fail rather than skip.
func Strict() bool { return os.Getenv(AllVar) == "1" || os.Getenv("CI") != "" }

// Need skips t (fails it when Strict) when err says what is missing:
// "needs WHAT: err".
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if Strict() {
		t.Fatalf("needs %s: %v", what, err)
	}
	t.Skipf("needs %s: %v (make test installs what it needs; %s=1 fails instead of skipping)", what, err, AllVar)
}

// Binary returns the first of names found on PATH, or skips t naming
// what (for example "fio 3.33").
func Binary(t testing.TB, what string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Need(t, what, fmt.Errorf("%s not on PATH", strings.Join(names, " or ")))
	return ""
}

// MySQLServer returns the MariaDB/MySQL server binary the managed
// instances run, or skips t.
func MySQLServer(t testing.TB) string {
	t.Helper()
	p, err := mysqld.FindBinary()
	Need(t, "a MariaDB or MySQL server", err)
	return p
}

// MySQLServerErr is MySQLServer for shared set-up code that has no t
// yet: nil when a server binary is installed.
func MySQLServerErr() error {
	_, err := mysqld.FindBinary()
	return err
}

// Fio returns the fio binary (the peer fio 3.33), or skips t.
func Fio(t testing.TB) string { t.Helper(); return Binary(t, "fio (the peer, 3.33)", "fio") }

// Sysbench returns the sysbench binary (the peer 1.0.20), or skips t.
func Sysbench(t testing.TB) string {
	t.Helper()
	return Binary(t, "sysbench (the peer, 1.0.20)", "sysbench")
}

// Chromium returns a headless browser for the HTML report tests, or
// skips t.
func Chromium(t testing.TB) string {
	t.Helper()
	return Binary(t, "Chromium (headless, for the HTML reports)", "chromium", "chromium-browser")
}

// FUSE skips t where /dev/fuse cannot be opened (the power-loss layer).
func FUSE(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err == nil {
		f.Close()
	}
	Need(t, "FUSE (/dev/fuse)", err)
}

// Root skips t unless it runs as root (loop devices, host settings,
// eBPF).
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Need(t, "root", errors.New("running as uid "+fmt.Sprint(os.Geteuid())))
	}
}
