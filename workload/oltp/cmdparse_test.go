package oltp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseCommandLine: sysbench's options reach the spec with sysbench's
// meaning (aliases, forced shutdown, checkpoints, ignored script options).
func TestParseCommandLine(t *testing.T) {
	tests := []struct {
		args  []string
		check func(cl *CommandLine) bool
	}{
		{[]string{"oltp_write_only", "run"}, func(cl *CommandLine) bool {
			s := cl.Spec
			return cl.Command == "run" && s.GetThreads() == 1 && s.GetTimeSeconds() == 10 && s.ForcedShutdownSeconds == nil &&
				s.GetConnection().Host == "" && cl.Output.Verbosity == 3 && s.GetPercentile() == 95
		}},
		{[]string{"--num-threads=4", "--max-time=20", "--max-requests=7", "--tx-rate=5", "/usr/share/sysbench/oltp_write_only.lua", "run"},
			func(cl *CommandLine) bool {
				s := cl.Spec
				return s.GetThreads() == 4 && s.GetTimeSeconds() == 20 && s.GetEvents() == 7 && s.GetRate() == 5 && len(cl.Notices) == 4
			}},
		{[]string{"oltp_write_only", "--forced-shutdown", "--time=100", "run"}, func(cl *CommandLine) bool {
			return cl.Spec.GetForcedShutdownSeconds() == 5
		}},
		{[]string{"oltp_write_only", "--forced-shutdown=10%", "--time=50", "run"}, func(cl *CommandLine) bool {
			return cl.Spec.GetForcedShutdownSeconds() == 5
		}},
		{[]string{"oltp_write_only", "--report-checkpoints=30,10", "--debug", "run"}, func(cl *CommandLine) bool {
			c := cl.Spec.GetReportCheckpoints()
			return len(c) == 2 && c[0] == 10 && c[1] == 30 && cl.Output.Verbosity == 5 && cl.Output.Debug
		}},
		{[]string{"oltp_write_only", "--point_selects=3", "--range-selects=off", "--range_size=5", "--pgsql-host=x", "--secondary", "--skip_trx=on", "--mysql-dry-run", "prepare"},
			func(cl *CommandLine) bool {
				return cl.Spec.GetSecondary() && cl.Spec.GetSkipTrx() && cl.Spec.GetDryRun()
			}},
		{[]string{"oltp_write_only", "--mysql-host=db1", "--mysql-port=3307", "--mysql-ignore-errors=all", "--db-ps-mode=disable", "cleanup"},
			func(cl *CommandLine) bool {
				c := cl.Spec.GetConnection()
				return c.Host == "db1" && c.GetPort() == 3307 && c.IgnoreErrorsSet && c.IgnoreErrors[0] == "all" && cl.Spec.GetUseTextProtocol()
			}},
		{[]string{"oltp_write_only", "--tables=x", "help"}, func(cl *CommandLine) bool { return cl.Spec == nil && cl.Command == "help" }},
		{[]string{"--help"}, func(cl *CommandLine) bool { return cl.Help }},
		{[]string{"--version"}, func(cl *CommandLine) bool { return cl.Version }},
	}
	for _, tt := range tests {
		cl, ex := ParseCommandLine(tt.args)
		if ex != nil || !tt.check(cl) {
			t.Errorf("ParseCommandLine(%q) = %+v, %v", tt.args, cl, ex)
		}
	}
}

// TestParseCommandLineExits: where, how and with which words sysbench
// 1.0.20 stops (cmd's comparison test checks the same against sysbench).
func TestParseCommandLineExits(t *testing.T) {
	tests := []struct {
		args   []string
		banner bool
		out    string // a line of stdout, or of stderr when it starts with "!"
	}{
		{[]string{"oltp_write_only", "run", "extra"}, false, "!Unrecognized command line argument: extra"},
		{[]string{"oltp_write_only", "--threads=x", "run"}, false, "!Invalid value for the 'threads' option: 'x'"},
		{[]string{"oltp_write_only", "--report-interval=x", "run"}, false, "!Invalid value for the 'report_interval' option: 'x'"},
		{[]string{"oltp_write_only", "--threads=0", "run"}, false, "FATAL: Invalid value for --threads: 0."},
		{[]string{"oltp_write_only", "--forced-shutdown=x", "run"}, false, "FATAL: Invalid value for --forced-shutdown: 'x'"},
		{[]string{"oltp_write_only", "--report-checkpoints=a", "run"}, false, "FATAL: Invalid value for --report-checkpoints: 'a'"},
		{[]string{"oltp_write_only", "--verbosity=6", "run"}, false, "Invalid value for verbosity: 6"},
		{[]string{"oltp_write_only", "--percentile=101", "run"}, false, "FATAL: Invalid value for --percentile: 101"},
		{[]string{"oltp_write_only", "--percentile=0", "--histogram", "run"}, false, "FATAL: --histogram cannot be used with --percentile=0"},
		{[]string{"oltp_write_only", "--rand-type=zipf", "run"}, false, "FATAL: Invalid random numbers distribution: zipf."},
		{[]string{"oltp_write_only", "--thread-stack-size=abc", "run"}, false, "FATAL: Invalid value for thread-stack-size: 0."},
		{[]string{"oltp_write_only", "--bogus=1", "help"}, true, "!invalid option: --bogus=1"},
		{[]string{"oltp_write_only", "--skip_trx=maybe", "run"}, true, "!invalid option: --skip_trx=maybe"},
		{[]string{"oltp_write_only", "foo"}, true, "!Unknown command: foo"},
		{[]string{"oltp_write_only"}, true, "FATAL: Command is required. Supported commands: prepare, prewarm, run, cleanup, help"},
		{[]string{"nosuchtest", "run"}, true, "FATAL: Cannot find benchmark 'nosuchtest': no such built-in test, file or module"},
		{[]string{"oltp_read_write", "run"}, true, "FATAL: writepath implements sysbench's oltp_write_only only; 'oltp_read_write' is not implemented"},
		{[]string{"oltp_write_only", "--db-driver=foo", "run"}, true, "FATAL: invalid database driver name: 'foo'"},
		{[]string{"oltp_write_only", "--db-ps-mode=foo", "run"}, true, "FATAL: Invalid value for db-ps-mode: foo"},
		// sysbench 1.0.20's booleans: on/off, true/false, 1/0; not ON or yes.
		{[]string{"oltp_write_only", "--mysql-compression=foo", "run"}, true, "!invalid option: --mysql-compression=foo"},
		{[]string{"oltp_write_only", "--mysql-compression=ON", "run"}, true, "!invalid option: --mysql-compression=ON"},
		{[]string{"oltp_write_only", "--mysql-compression=yes", "run"}, true, "!invalid option: --mysql-compression=yes"},
		{[]string{"oltp_write_only", "--mysql-compression=2", "run"}, true, "!invalid option: --mysql-compression=2"},
		{[]string{"oltp_write_only", "--tables=x", "run"}, true, "FATAL: invalid value for --tables: 'x' (want a whole number from 0 to 100000)"},
	}
	for _, tt := range tests {
		_, ex := ParseCommandLine(tt.args)
		if ex == nil {
			t.Errorf("ParseCommandLine(%q) succeeded; want %q", tt.args, tt.out)
			continue
		}
		text := ex.Stdout
		want := tt.out
		if strings.HasPrefix(want, "!") {
			text, want = ex.Stderr, want[1:]
		}
		if ex.Code != 1 || ex.Banner != tt.banner || !strings.Contains(text, want+"\n") {
			t.Errorf("ParseCommandLine(%q) = exit %d banner %v stdout %q stderr %q; want exit 1 banner %v with %q",
				tt.args, ex.Code, ex.Banner, ex.Stdout, ex.Stderr, tt.banner, tt.out)
		}
	}
}

// TestConfigFile: --config-file sets sysbench's own options as written
// in the file; later command-line options win.
func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sb.cfg")
	if err := os.WriteFile(path, []byte("threads=3 # three\nmysql-host='db9'\nnot-an-option=1\ntables=5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cl, ex := ParseCommandLine([]string{"oltp_write_only", "--config-file=" + path, "--time=3", "run"})
	if ex != nil {
		t.Fatal(ex)
	}
	if s := cl.Spec; s.GetThreads() != 3 || s.GetConnection().Host != "db9" || s.GetTimeSeconds() != 3 || s.GetTables() != 1 {
		t.Errorf("spec = %v; want threads 3, host db9, time 3, tables 1 (a test option in a config file is overwritten by its default, as in sysbench)", s)
	}
}

// TestHelpFromTable: help lists every option of the table with its
// format and default, aligned as sysbench aligns them.
func TestHelpFromTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTestHelp(&b, "/usr/share/sysbench/oltp_write_only.lua"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"oltp_write_only.lua options:\n",
		"  --auto_inc[=on|off]           Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs [on]\n",
		"  --tables=N                    Number of tables [1]\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("test help lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Help(&b); err != nil {
		t.Fatal(err)
	}
	for _, opt := range optIndex {
		if sec, _ := optSection(opt.name); sec != secPgSQL && sec != secLogText && !textOnly[canon(opt.name)] && !strings.Contains(b.String(), "--"+opt.name) {
			t.Errorf("kind help lacks --%s", opt.name)
		}
	}
}

// TestDriverInitExits: a DB driver that does not initialize ends each
// command as sysbench's Lua code ends it: the driver's complaint, then the
// function that called it; run after its header, once per thread.
func TestDriverInitExits(t *testing.T) {
	const (
		driver = "FATAL: invalid database driver name: 'foo'\n"
		psMode = "FATAL: Invalid value for db-ps-mode: x\n"
		failed = ": failed to initialize the DB driver\n"
	)
	tests := []struct {
		args      []string
		runHeader bool
		stdout    string
	}{
		{[]string{"oltp_write_only", "--db-driver=foo", "prepare"}, false,
			driver + "FATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:82" + failed},
		{[]string{"oltp_write_only", "--db-driver=foo", "--threads=2", "prewarm"}, false,
			"Initializing worker threads...\n\n" + strings.Repeat(driver+"FATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:97"+failed, 2)},
		{[]string{"oltp_write_only", "--db-driver=foo", "--threads=2", "cleanup"}, false,
			driver + "FATAL: `cleanup' function failed: /usr/share/sysbench/oltp_common.lua:387" + failed},
		// The mode is checked first.
		{[]string{"oltp_write_only", "--db-driver=foo", "--db-ps-mode=x", "cleanup"}, false,
			psMode + "FATAL: `cleanup' function failed: /usr/share/sysbench/oltp_common.lua:387" + failed},
		{[]string{"oltp_write_only", "--db-ps-mode=x", "--threads=2", "--tables=x", "run"}, true,
			strings.Repeat(psMode+"FATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:348"+failed, 2) + "FATAL: Thread initialization failed!\n"},
	}
	for _, tt := range tests {
		cl, ex := ParseCommandLine(tt.args)
		if ex == nil {
			t.Errorf("%q: succeeded", tt.args)
			continue
		}
		if ex.Code != 1 || !ex.Banner || ex.RunHeader != tt.runHeader || ex.Stdout != tt.stdout || ex.Stderr != "" {
			t.Errorf("%q: exit %d banner %v header %v stdout\n%s stderr %q\nwant exit 1, the banner, header %v, stdout\n%s", tt.args, ex.Code, ex.Banner, ex.RunHeader, ex.Stdout, ex.Stderr, tt.runHeader, tt.stdout)
		}
		if tt.runHeader && cl.Spec.GetThreads() != 2 {
			t.Errorf("%q: the header's spec has %d threads", tt.args, cl.Spec.GetThreads())
		}
	}
}

// TestStdinScriptIsMarked: no test named is a Lua script on standard
// input, which the caller may find empty.
func TestStdinScriptIsMarked(t *testing.T) {
	for _, args := range [][]string{{"--unknown"}, {"-"}, {}} {
		if _, ex := ParseCommandLine(args); ex == nil || !ex.Stdin || ex.Code != 1 {
			t.Errorf("%q: %+v; want a refusal marked Stdin", args, ex)
		}
	}
	if _, ex := ParseCommandLine([]string{"oltp_write_only", "run", "--mysql-dry-run"}); ex != nil && ex.Stdin {
		t.Errorf("a named test is marked Stdin")
	}
}
