package main

import (
	"os"
	"strings"
	"testing"
)

// TestSysbenchHelpOnStdout: `writepath sysbench --help` prints sysbench's
// help and writepath's own flags on stdout, nothing on stderr (a script's
// `sysbench --help | sed ...` sees all of it), the flags before
// "Compiled-in tests:" where the build-dependent part of sysbench's help
// ends; `run oltp oltp_write_only --help` prints the same.
func TestSysbenchHelpOnStdout(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"sysbench", "--help"}, {"run", "oltp", "oltp_write_only", "--help"}} {
		out, errOut, err := runCLI(t, dir, args...)
		if err != nil || errOut != "" {
			t.Errorf("%q: %v, stderr %q; want none", args, err, errOut)
		}
		flags, tests := strings.Index(out, "writepath sysbench flags"), strings.Index(out, "\nCompiled-in tests:\n")
		if args[0] == "sysbench" && (flags < 0 || !strings.Contains(out, "--local-workers")) {
			t.Errorf("%q: stdout lacks writepath's flags:\n%s", args, out)
		}
		if tests < 0 || flags > tests || !strings.HasPrefix(out, "Usage:\n  sysbench [options]... [testname] [command]\n") {
			t.Errorf("%q: stdout is not sysbench's help with writepath's flags before its tests:\n%s", args, out)
		}
	}
}

// TestScriptInput: a terminal is no script (sysbench would wait for one
// to be typed); a file or pipe is read.
func TestScriptInput(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if scriptInput(f) == nil {
		t.Error("/dev/null (a character device, not a terminal) is no script input")
	}
	if r := strings.NewReader(""); scriptInput(r) != r {
		t.Error("a reader is not script input")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		defer tty.Close()
		if scriptInput(tty) != nil {
			t.Error("a terminal is script input")
		}
	}
}
