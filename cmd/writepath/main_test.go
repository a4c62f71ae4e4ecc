package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
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
