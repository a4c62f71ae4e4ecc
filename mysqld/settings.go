package mysqld

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SettingClass says what a server setting can reach beyond the server's
// own tables, so that a worker can guard it (MySQL 8 and MariaDB 10.11
// names; dashes and underscores alike, loose-/maximum- and skip-/enable-/
// disable- prefixes seen through).
type SettingClass int

// The classes, from harmless to refused unless allowed by name.
const (
	// Plain is a tuning knob (innodb_flush_method, max_connections...).
	Plain SettingClass = iota
	// PathValued names one file or directory; a relative value is under
	// the datadir.
	PathValued
	// PathList names several directories, separated by ListSep.
	PathList
	// DataFiles is innodb_data_file_path's "name:size[:autoextend...];...":
	// names under innodb_data_home_dir.
	DataFiles
	// Privileged loads code, runs SQL or commands, reaches arbitrary
	// files, weakens access or opens the network.
	Privileged
	// Abbreviated is a shortened option name that the server (MariaDB
	// takes any unique prefix) could read as a setting of another class.
	Abbreviated
)

func (c SettingClass) String() string {
	return [...]string{"plain", "path", "path list", "data file path", "privileged", "abbreviated"}[c]
}

// pathSettings name one file or directory.
var pathSettings = set(
	"datadir", "socket", "pid_file", "log_error", "general_log_file", "slow_query_log_file",
	"log_slow_query_file", "log_bin", "log_bin_index", "log_basename", "relay_log", "relay_log_index",
	"relay_log_info_file", "master_info_file", "innodb_data_home_dir", "innodb_log_group_home_dir",
	"innodb_undo_directory", "innodb_doublewrite_dir", "innodb_tmpdir", "innodb_temp_tablespaces_dir",
	"innodb_buffer_pool_filename", "character_sets_dir", "lc_messages_dir", "language", "ft_stopword_file",
	"ssl_ca", "ssl_capath", "ssl_cert", "ssl_crl", "ssl_crlpath", "ssl_key", "admin_ssl_ca", "admin_ssl_capath",
	"admin_ssl_cert", "admin_ssl_crl", "admin_ssl_crlpath", "admin_ssl_key", "mysqlx_ssl_ca", "mysqlx_ssl_capath",
	"mysqlx_ssl_cert", "mysqlx_ssl_crl", "mysqlx_ssl_crlpath", "mysqlx_ssl_key", "mysqlx_socket",
	"caching_sha2_password_private_key_path", "caching_sha2_password_public_key_path",
	"sha256_password_private_key_path", "sha256_password_public_key_path", "log_tc", "log_isam",
	"log_ddl_recovery", "aria_log_dir_path", "des_key_file",
	"keyring_file_data", "keyring_encrypted_file_data", "audit_log_file", "server_audit_file_path",
)

// listSettings name several directories; the value is the separator
// (tmpdir takes a colon-separated list for round-robin use).
var listSettings = map[string]string{"innodb_directories": ";", "tmpdir": ":", "slave_load_tmpdir": ":", "replica_load_tmpdir": ":"}

// dataFileSettings have innodb_data_file_path's syntax.
var dataFileSettings = set("innodb_data_file_path", "innodb_temp_data_file_path")

// privilegedSettings load code (plugins, libraries, a basedir to find
// them in), run SQL or commands at start or on each connection, open file
// I/O to SQL, weaken access (another OS user, no grant tables, a chroot)
// or open the network beyond the managed socket.
var privilegedSettings = set(
	"plugin_dir", "plugin_load", "plugin_load_add", "early_plugin_load", "basedir",
	"init_file", "init_connect", "init_slave", "init_replica", "bootstrap", "debug",
	"secure_file_priv", "skip_grant_tables", "user", "chroot",
	"skip_networking", "networking", "bind_address", "port", "extra_port", "admin_address", "admin_port",
	"mysqlx", "mysqlx_port", "mysqlx_bind_address", "named_pipe", "shared_memory",
	"innodb_redo_log_archive_dirs",
)

// exactNames are real option names that are prefixes of guarded ones: as
// whole names they are themselves (general_log=1 is no general_log_file).
var exactNames = set("general_log", "slow_query_log", "log_slow_query", "innodb", "innodb_doublewrite",
	"lc_messages", "ssl")

// guarded is every guarded name, for the abbreviation check.
var guarded = func() []string {
	var out []string
	for _, m := range []map[string]bool{pathSettings, dataFileSettings, privilegedSettings} {
		for k := range m {
			out = append(out, k)
		}
	}
	for k := range listSettings {
		out = append(out, k)
	}
	return out
}()

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Classify says what key can reach. Of the names key may stand for (with
// skip-/enable-/disable- taken off too, as the server does) the strictest
// class wins; the boolean reports whether the key names the setting with
// its own value (false for skip-/disable- forms, which only turn it off).
func Classify(key string) (SettingClass, bool) {
	k := baseName(key)
	class, direct := classOf(k), true
	for _, p := range []string{"skip_", "enable_", "disable_"} {
		if rest, ok := strings.CutPrefix(k, p); ok {
			if c := classOf(rest); c > class {
				class, direct = c, p == "enable_"
			}
		}
	}
	return class, direct
}

// BaseName is key as the server reads it: lower case, underscores,
// without loose-/maximum- prefixes.
func BaseName(key string) string { return baseName(key) }

func baseName(key string) string {
	k := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	for {
		rest, ok := strings.CutPrefix(k, "loose_")
		if !ok {
			rest, ok = strings.CutPrefix(k, "maximum_")
		}
		if !ok {
			return k
		}
		k = rest
	}
}

func classOf(k string) SettingClass {
	switch {
	case privilegedSettings[k] || k == "wsrep" || strings.HasPrefix(k, "wsrep_"):
		// wsrep_provider loads a library, wsrep_notify_cmd and
		// wsrep_sst_method run commands: the whole family.
		return Privileged
	case pathSettings[k]:
		return PathValued
	case listSettings[k] != "":
		return PathList
	case dataFileSettings[k]:
		return DataFiles
	case exactNames[k]:
		return Plain
	}
	for _, g := range guarded {
		if strings.HasPrefix(g, k) {
			return Abbreviated
		}
	}
	return Plain
}

// ListSep is the separator of a PathList setting's directories.
func ListSep(key string) string { return listSettings[baseName(key)] }

// Check validates a setting from any source (a --set argument, a raw
// spec): the key is an option name (letters, digits, '_', '-', '.'), the
// value has no control character (a \v or \r in my.cnf starts another
// directive), and a value that names paths has none of the characters the
// server's option parser would read differently from a guard (quotes,
// backslash escapes, '#' comments, whitespace).
func (s Setting) Check() error {
	if s.Key == "" {
		return fmt.Errorf("setting %q: empty key (want key=value, e.g. --set innodb_flush_method=O_DIRECT)", s)
	}
	for _, r := range s.Key {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("setting key %q: control character %U", clip(s.Key), r)
		}
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("setting key %q: %q is not allowed in an option name (letters, digits, _ - . only)", clip(s.Key), r)
		}
	}
	if !utf8.ValidString(s.Value) {
		return fmt.Errorf("setting %s: value is not valid UTF-8", s.Key)
	}
	for _, r := range s.Value {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029' {
			return fmt.Errorf("setting %s: value has control character %U", s.Key, r)
		}
	}
	if s.Value != strings.Trim(s.Value, " ") {
		return fmt.Errorf("setting %s: value %q has leading or trailing spaces", s.Key, clip(s.Value))
	}
	if c, direct := Classify(s.Key); direct {
		bad := ""
		switch c {
		case PathValued:
			bad = pathUnsafe + ":;"
		case PathList:
			bad = strings.ReplaceAll(pathUnsafe+":;", ListSep(s.Key), "")
		case DataFiles:
			bad = pathUnsafe
		}
		if i := strings.IndexAny(s.Value, bad); bad != "" && i >= 0 {
			return fmt.Errorf("setting %s: %q in a path is not allowed (the server would read quotes, escapes, #, spaces and list separators otherwise than a guard)", s.Key, s.Value[i])
		}
	}
	return nil
}

// pathUnsafe are what my.cnf's parser takes for something else than a
// path byte: quotes, backslash escapes, a '#' comment, spaces; and shell
// characters, for good measure.
const pathUnsafe = "\"'\\# \t`$"

// clip shortens a string echoed in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
