package mysqld

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSettingCheck (issue 13, point 3): keys are option names and values
// carry no control character, so no setting can start another my.cnf
// directive (`!include\v/any/file` did); path values carry nothing the
// server's parser reads otherwise than a guard.
func TestSettingCheck(t *testing.T) {
	bad := []string{
		"!include\v/etc/passwd", "!include /etc/passwd", "!includedir=/etc",
		"a\vb=1", "a\fb=1", "a\rb=1", "a\nb=1", "a b=1", "[client]=1", "a\x00=1", "#x=1", "=1", "",
		"max_connections=10\v!include /etc/passwd", "max_connections=10\f", "x=1\r", "x=a\x00b", "x=\x7f",
		"x=a\u0085b", "x=a\u2028b", "x=\xff", "x=\t1", "\tx=1", "x\f=1",
		`log_error="/etc/x"`, "log_error=/tmp/a#/../../allowed", `general_log_file=/a\s/b`, "log-error=/a b",
		"pid_file=/a:/b", "tmpdir=/a;/b", "innodb_directories=/a:/b",
	}
	for _, s := range bad {
		if got, err := ParseSetting(s); err == nil {
			t.Errorf("ParseSetting(%q) = %+v; want an error", s, got)
		}
	}
	good := map[string]Setting{
		"innodb_flush_method = O_DIRECT": {"innodb_flush_method", "O_DIRECT"},
		"skip-log-bin":                   {"skip-log-bin", ""},
		"tmpdir=/a:/b":                   {"tmpdir", "/a:/b"},
		"innodb_directories=/a;/b":       {"innodb_directories", "/a;/b"},
		"innodb_data_file_path=ibdata1:12M;ibdata2:50M:autoextend": {"innodb_data_file_path", "ibdata1:12M;ibdata2:50M:autoextend"},
		"loose-server_audit_logging=ON":                            {"loose-server_audit_logging", "ON"},
		"sql_mode=STRICT_TRANS_TABLES,NO_ZERO_DATE":                {"sql_mode", "STRICT_TRANS_TABLES,NO_ZERO_DATE"},
	}
	for in, want := range good {
		if got, err := ParseSetting(in); err != nil || got != want {
			t.Errorf("ParseSetting(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		key    string
		class  SettingClass
		direct bool
	}{
		{"innodb_flush_method", Plain, true},
		{"general_log", Plain, true},
		{"innodb_doublewrite", Plain, true},
		{"log-error", PathValued, true},
		{"general-log-file", PathValued, true},
		{"loose-innodb-doublewrite-dir", PathValued, true},
		{"skip-log-bin", PathValued, false},
		{"tmpdir", PathList, true},
		{"innodb_data_file_path", DataFiles, true},
		{"plugin-load-add", Privileged, true},
		{"loose_maximum_plugin_dir", Privileged, true},
		{"init_file", Privileged, true},
		{"init-connect", Privileged, true},
		{"skip-grant-tables", Privileged, true},
		{"disable-skip-networking", Privileged, false},
		{"user", Privileged, true},
		{"wsrep_provider", Privileged, true},
		{"wsrep-notify-cmd", Privileged, true},
		{"secure_file_priv", Privileged, true},
		{"early-plugin-load", Privileged, true},
		{"init-f", Abbreviated, true},
		{"log-e", Abbreviated, true},
		{"plugin-load-a", Abbreviated, true},
		{"innodb_data_home", Abbreviated, true},
	}
	for _, tt := range tests {
		if c, d := Classify(tt.key); c != tt.class || d != tt.direct {
			t.Errorf("Classify(%q) = %v, %v; want %v, %v", tt.key, c, d, tt.class, tt.direct)
		}
	}
}

// TestClassifyCoversTheServersOptions asks the installed server for every
// option it knows: each whose name says it holds a file, directory or
// path is classified (or reviewed here as not one), so a path option the
// lists miss shows up on the next server version.
func TestClassifyCoversTheServersOptions(t *testing.T) {
	bin, err := FindBinary()
	need(t, "a MariaDB or MySQL server", err)
	out, err := exec.CommandContext(context.Background(), bin, "--no-defaults", "--verbose", "--help").Output()
	if err != nil {
		t.Fatalf("%s --verbose --help: %v", bin, err)
	}
	// Reviewed: these name sizes, switches, counts or tables, not paths.
	notPaths := set("aria_log_file_size", "aria_max_sort_file_size", "aria_pagecache_file_hash_size",
		"aria_sync_log_dir", "binlog_file_cache_size", "innodb_disable_sort_file_cache",
		"innodb_file_per_table", "innodb_log_file_buffering", "innodb_log_file_mmap", "innodb_log_file_size",
		"innodb_status_file", "key_cache_file_hash_size", "keep_files_on_create", "large_files_support",
		"lower_case_file_system", "myisam_max_sort_file_size", "performance_schema_max_file_classes",
		"performance_schema_max_file_handles", "performance_schema_max_file_instances", "ignore_db_dirs",
		"character_set_filesystem", "open_files_limit", "innodb_open_files", "core_file", "encrypt_tmp_files",
		"log_slow_query", "innodb_ft_user_stopword_table", "sync_relay_log_info", "innodb_ft_server_stopword_table",
		"init_rpl_role", "local_infile", "performance_schema_max_socket_classes", "performance_schema_max_socket_instances")
	pathy := regexp.MustCompile(`(dir|file|path|directory|home|basename)$|_dir_|_file_|_path_|socket|plugin|^init_`)
	seen := 0
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z0-9][a-z0-9_-]*)`).FindAllStringSubmatch(string(out), -1) {
		name := BaseName(m[1])
		if !pathy.MatchString(name) || notPaths[name] {
			continue
		}
		seen++
		if c, _ := Classify(name); c == Plain && name != "unix_socket" && name != "plugin_maturity" {
			t.Errorf("%s option %s looks like a path or code option but is classified plain", bin, name)
		}
	}
	if seen < 30 {
		t.Errorf("only %d path-like options in %s --help; the pattern or the output changed", seen, bin)
	}
}

// FuzzParseSetting: whatever ParseSetting accepts renders as exactly one
// my.cnf line "key[=value]" of printable characters, whose key is an
// option name, which reads back as the same setting, and which Classify
// takes without panicking.
func FuzzParseSetting(f *testing.F) {
	for _, s := range []string{"innodb_flush_method=O_DIRECT", "!include\v/etc/passwd", "skip-log-bin", "a=b=c",
		"log_error=/tmp/x#y", "tmpdir=/a:/b", " k = v ", "init-f=/x", "x=\u2028"} {
		f.Add(s)
	}
	keyRE := regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSetting(in)
		if err != nil {
			return
		}
		line := s.String()
		if !keyRE.MatchString(s.Key) || !utf8.ValidString(line) || strings.ContainsAny(line, "\n\r\v\f\x00") {
			t.Fatalf("ParseSetting(%q) = %+v: renders %q", in, s, line)
		}
		for _, r := range line {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("ParseSetting(%q) renders control character %U", in, r)
			}
		}
		cnf := renderCnf([]Setting{s})
		if n := strings.Count(cnf, "\n"); n != 3 {
			t.Fatalf("ParseSetting(%q) renders %d lines of my.cnf, want 1 after the header: %q", in, n-2, cnf)
		}
		again, err := ParseSetting(line)
		if err != nil || again != s {
			t.Fatalf("ParseSetting(%q) = %+v renders %q, which reads back as %+v, %v", in, s, line, again, err)
		}
		Classify(s.Key)
	})
}
