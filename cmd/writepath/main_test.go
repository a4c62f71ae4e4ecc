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
		argv := strings.Split(args, "\x1f")
		if len(os.Args) > 1 && os.Args[1] == "powerloss-serve" {
			// A child's own child: the crash harness runs this executable
			// as `powerloss-serve ...` (the environment is inherited).
			argv = os.Args[1:]
		}
		os.Exit(execute(argv, testCommands()...))
	}
	os.Exit(m.Run())
}
