package oltp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writepath/writepath/guard"
	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload"
)

// TestCheckSettingsGuardsPathsAndCode (issue 13, point 3): on a guarded
// worker a server setting that names a path is guarded like a path and
// handed to the server resolved; one that loads code or reaches files is
// refused unless allowed by name.
func TestCheckSettingsGuardsPathsAndCode(t *testing.T) {
	root := t.TempDir()
	data, extra := filepath.Join(root, "data"), filepath.Join(root, "extra")
	datadir := filepath.Join(data, "srv", "data")
	for _, d := range []string{datadir, extra, filepath.Join(data, "s1", "s2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(data, "s1", "s2"), filepath.Join(datadir, "lnk"))
	g, err := guard.New(guard.Config{DataDir: data, AllowPaths: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	env := workload.Env{DataDir: data, Guard: g}
	refused := []struct{ set, want string }{
		{"log_error=/etc/evil.log", "outside the worker's allowed paths"},
		{"log-error=../../../outside.log", "outside the worker's allowed paths"},
		{"general_log_file=" + root + "/elsewhere/g.log", "--allow-path"},
		{"innodb_doublewrite_dir=/mnt/dw", "--allow-path"},
		{"tmpdir=" + extra + ":/etc", "outside the worker's allowed paths"},
		{"innodb_data_file_path=/etc/ibdata1:12M:autoextend", "plain name under innodb_data_home_dir"},
		{"innodb_data_file_path=ibdata1:12M;../../x:12M", "plain name under innodb_data_home_dir"},
		{"plugin_load_add=ha_connect.so", "--allow-setting plugin_load_add"},
		{"loose-plugin-dir=" + extra, "--allow-setting plugin_dir"},
		{"init_file=" + extra + "/init.sql", "--allow-setting init_file"},
		{"init-connect=DROP DATABASE sbtest", "--allow-setting init_connect"},
		{"secure_file_priv=", "--allow-setting secure_file_priv"},
		{"user=root", "--allow-setting user"},
		{"skip-grant-tables", "--allow-setting skip_grant_tables"},
		{"disable-skip-networking", "--allow-setting"},
		{"bind-address=0.0.0.0", "--allow-setting bind_address"},
		{"wsrep_provider=/tmp/x.so", "--allow-setting wsrep_provider"},
		{"init-f=/tmp/x", "full option name"},
	}
	for _, tt := range refused {
		s, err := mysqld.ParseSetting(tt.set)
		if err != nil {
			t.Fatalf("ParseSetting(%q): %v", tt.set, err)
		}
		if got, err := CheckSettings([]mysqld.Setting{s}, datadir, env); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckSettings(%s) = %v, %v; want refused with %q", tt.set, got, err, tt.want)
		}
	}
	allowedTests := []struct{ set, want string }{
		{"innodb_flush_method=O_DIRECT", "O_DIRECT"},
		{"log_error=logs/err.log", filepath.Join(datadir, "logs/err.log")},
		{"innodb_doublewrite_dir=lnk/../dw", filepath.Join(data, "s1", "dw")}, // after the symlink, as the server sees it
		{"innodb_doublewrite_dir=" + extra + "/dw", filepath.Join(extra, "dw")},
		{"tmpdir=" + extra + ":tmp2", extra + ":" + filepath.Join(datadir, "tmp2")},
		{"innodb_data_file_path=ibdata1:12M;ibdata2:50M:autoextend", "ibdata1:12M;ibdata2:50M:autoextend"},
		{"skip-log-bin", ""},
		{"general_log=1", "1"},
	}
	for _, tt := range allowedTests {
		s, _ := mysqld.ParseSetting(tt.set)
		got, err := CheckSettings([]mysqld.Setting{s}, datadir, env)
		if err != nil || len(got) != 1 || got[0].Value != tt.want {
			t.Errorf("CheckSettings(%s) = %v, %v; want value %q", tt.set, got, err, tt.want)
		}
	}
	// Allowed by name, a setting passes as given.
	g2, _ := guard.New(guard.Config{DataDir: data, AllowSettings: []string{"plugin-load-add", "innodb_doublewrite_dir"}})
	env2 := workload.Env{DataDir: data, Guard: g2}
	for _, set := range []string{"plugin_load_add=ha_connect.so", "innodb_doublewrite_dir=/mnt/dw"} {
		s, _ := mysqld.ParseSetting(set)
		if got, err := CheckSettings([]mysqld.Setting{s}, datadir, env2); err != nil || got[0] != s {
			t.Errorf("allowed by name: CheckSettings(%s) = %v, %v; want it as given", set, got, err)
		}
	}
	// Without a guard (a local run) nothing changes.
	s, _ := mysqld.ParseSetting("plugin_load_add=x.so")
	if got, err := CheckSettings([]mysqld.Setting{s}, datadir, workload.Env{}); err != nil || got[0] != s {
		t.Errorf("unguarded CheckSettings = %v, %v", got, err)
	}
	if _, err := CheckSettings([]mysqld.Setting{{Key: "log_error", Value: "/etc/x"}}, datadir, env); !errors.Is(err, guard.ErrOutside) {
		t.Errorf("CheckSettings error = %v; want guard.ErrOutside in the chain", err)
	}
}
