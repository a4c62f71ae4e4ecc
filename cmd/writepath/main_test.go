package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/writepath/writepath/local"
)

// cliChildEnv, when set to arguments joined by \x1f, makes the test binary
// run `writepath ARGS...` (for tests that kill a worker process).
const cliChildEnv = "WRITEPATH_TEST_CLI"

func TestMain(m *testing.M) {
	if args := os.Getenv(cliChildEnv); args != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		cmd := newRootCmd()
		cmd.SetArgs(strings.Split(args, "\x1f"))
		err := cmd.ExecuteContext(ctx)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "writepath:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startCoordinator serves a coordinator with no workers of its own on
// loopback, closed at the end of the test.
func startCoordinator(t *testing.T) *local.Fabric {
	t.Helper()
	f, err := local.Start(local.Config{DBPath: filepath.Join(t.TempDir(), "writepath.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
