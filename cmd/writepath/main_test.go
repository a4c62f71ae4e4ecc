package main

import (
	"os"
	"strings"
	"testing"
)

// cliChildEnv, when set to arguments joined by \x1f, makes the test binary
// run `writepath ARGS...` (for tests that kill a worker process).
const cliChildEnv = "WRITEPATH_TEST_CLI"

func TestMain(m *testing.M) {
	if args := os.Getenv(cliChildEnv); args != "" {
		os.Exit(execute(strings.Split(args, "\x1f"), testCommands()...))
	}
	os.Exit(m.Run())
}
