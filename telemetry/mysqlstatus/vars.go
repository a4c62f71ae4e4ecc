package mysqlstatus

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// VariableNames are the server variables the field tunes on the write path
// and that advise checks. Absent ones (MariaDB has no
// innodb_redo_log_capacity; MySQL 8.0.30+ no innodb_log_files_in_group) are
// simply missing from Variables.
var VariableNames = []string{
	"version", "version_comment", "datadir", "innodb_data_home_dir", "innodb_log_group_home_dir",
	"innodb_flush_method", "innodb_flush_log_at_trx_commit", "innodb_doublewrite", "innodb_doublewrite_dir",
	"innodb_doublewrite_files", "innodb_log_write_ahead_size", "innodb_io_capacity", "innodb_io_capacity_max",
	"innodb_flush_neighbors", "innodb_redo_log_capacity", "innodb_log_file_size", "innodb_log_files_in_group",
	"innodb_buffer_pool_size", "innodb_dedicated_server", "innodb_use_fdatasync", "innodb_page_size",
	"sync_binlog", "log_bin", "binlog_group_commit_sync_delay",
}

// Variables are a server's effective settings, by lower-case name.
type Variables struct{ m map[string]string }

// NewVariables wraps name -> value pairs (names are lower-cased, and '-'
// read as '_' as in option files).
func NewVariables(m map[string]string) Variables {
	v := Variables{m: make(map[string]string, len(m))}
	for k, val := range m {
		v.m[strings.ReplaceAll(strings.ToLower(k), "-", "_")] = val
	}
	return v
}

// ReadVariables reads VariableNames from the server (SHOW GLOBAL VARIABLES).
func ReadVariables(ctx context.Context, db *sql.DB) (Variables, error) {
	m, err := showPairs(ctx, db, "SHOW GLOBAL VARIABLES", VariableNames)
	if err != nil {
		return Variables{}, err
	}
	return NewVariables(m), nil
}

// Names returns the names present, sorted.
func (v Variables) Names() []string {
	out := make([]string, 0, len(v.m))
	for k := range v.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Str returns a variable's value and whether the server has it.
func (v Variables) Str(name string) (string, bool) {
	s, ok := v.m[name]
	return s, ok
}

// Int returns a numeric variable; option-file suffixes K, M, G, T (powers
// of 1024) are understood.
func (v Variables) Int(name string) (int64, bool) {
	s, ok := v.m[name]
	if !ok {
		return 0, false
	}
	n, err := ParseSize(s)
	return n, err == nil
}

// Bool returns an ON/OFF (1/0, TRUE/FALSE) variable.
func (v Variables) Bool(name string) (bool, bool) {
	switch strings.ToUpper(strings.TrimSpace(v.m[name])) {
	case "ON", "1", "TRUE", "YES":
		return true, true
	case "OFF", "0", "FALSE", "NO":
		return false, true
	}
	return false, false
}

// MariaDB reports whether the server is MariaDB (by version strings).
func (v Variables) MariaDB() bool {
	return strings.Contains(strings.ToLower(v.m["version"]+" "+v.m["version_comment"]), "mariadb")
}

// RedoCapacity is the redo log's size in bytes: innodb_redo_log_capacity
// (MySQL >= 8.0.30), else innodb_log_file_size x innodb_log_files_in_group
// (one file when the variable is gone, as in MariaDB >= 10.5). source says
// which variables it came from.
func (v Variables) RedoCapacity() (bytes int64, source string, ok bool) {
	if c, ok := v.Int("innodb_redo_log_capacity"); ok && c > 0 {
		return c, "innodb_redo_log_capacity", true
	}
	size, ok := v.Int("innodb_log_file_size")
	if !ok {
		return 0, "", false
	}
	files, ok := v.Int("innodb_log_files_in_group")
	if !ok {
		return size, "innodb_log_file_size", true
	}
	return size * files, "innodb_log_file_size*innodb_log_files_in_group", true
}

// ParseSize parses "134217728", "128M", "1G" into bytes.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	return n * mult, nil
}

// showPairs runs "<stmt> WHERE Variable_name IN (...)" and returns the
// name -> value pairs, names lower-cased.
func showPairs(ctx context.Context, db *sql.DB, stmt string, names []string) (map[string]string, error) {
	q := stmt + " WHERE Variable_name IN (" + strings.Repeat("?,", len(names)-1) + "?)"
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	defer rows.Close()
	out := make(map[string]string, len(names))
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
		out[strings.ToLower(k)] = v.String
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	return out, nil
}

// ReadStatus reads the named global status variables (SHOW GLOBAL STATUS),
// e.g. "uptime"; names are lower-case, absent ones are missing from the map.
func ReadStatus(ctx context.Context, db *sql.DB, names ...string) (map[string]string, error) {
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	return showPairs(ctx, db, "SHOW GLOBAL STATUS", names)
}
