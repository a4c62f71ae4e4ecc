package mysqld

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Setting is one [mysqld] line of my.cnf. An empty Value writes a bare key
// (e.g. "skip-log-bin").
type Setting struct{ Key, Value string }

func (s Setting) String() string {
	if s.Value == "" {
		return s.Key
	}
	return s.Key + "=" + s.Value
}

// ParseSetting parses "key=value" or a bare "key" as given to --set, and
// checks it (Setting.Check).
func ParseSetting(s string) (Setting, error) {
	k, v, _ := strings.Cut(s, "=")
	// Only spaces are trimmed: a trailing \f or \r is refused, not
	// silently dropped.
	st := Setting{Key: strings.Trim(k, " "), Value: strings.Trim(v, " ")}
	if err := st.Check(); err != nil {
		return Setting{}, err
	}
	return st, nil
}

// normKey makes dashes and underscores equivalent, as the server does.
func normKey(k string) string { return strings.ReplaceAll(strings.ToLower(k), "-", "_") }

// merge returns base with every override applied: an override replaces the
// base line with the same key (in place) or is appended.
func merge(base, overrides []Setting) []Setting {
	out := append([]Setting(nil), base...)
	for _, o := range overrides {
		replaced := false
		for i := range out {
			if normKey(out[i].Key) == normKey(o.Key) {
				out[i] = o
				replaced = true
			}
		}
		if !replaced {
			out = append(out, o)
		}
	}
	return out
}

// baseSettings is the part of my.cnf that places the instance: paths, port,
// and what a sandbox needs to coexist with other servers on the host.
func (in *Instance) baseSettings() []Setting {
	s := []Setting{
		{"datadir", in.DataDir()},
		{"socket", in.socket},
		{"port", strconv.Itoa(in.port)},
		{"bind-address", "127.0.0.1"},
		{"pid-file", in.PIDFile()},
		{"log-error", in.ErrorLogPath()},
		// Its own tmpdir: implicit temporary tables of one server must not
		// meet another server's (or a /tmp cleaner) in a shared /tmp.
		{"tmpdir", in.TmpDir()},
		{"skip-name-resolve", ""},
		// Many client threads on a small sandbox: the defaults (151) are
		// too few for --threads 256.
		{"max_connections", "1000"},
	}
	if os.Geteuid() == 0 {
		// mysqld refuses to run as root unless told to.
		s = append(s, Setting{"user", "root"})
	}
	if in.version.Flavor == MySQL && in.version.AtLeast(8, 0) {
		// X Plugin listens on 33060 by default and would clash with any
		// other instance on the host.
		s = append(s, Setting{"mysqlx", "OFF"})
	}
	return s
}

// renderCnf is the my.cnf text for settings.
func renderCnf(settings []Setting) string {
	var b strings.Builder
	b.WriteString("# written by writepath; edits are overwritten on the next start\n[mysqld]\n")
	for _, s := range settings {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// writeCnf writes DIR/my.cnf from the base and the instance's overrides,
// and makes the tmpdir it names.
func (in *Instance) writeCnf() error {
	if err := os.MkdirAll(in.TmpDir(), 0o750); err != nil {
		return fmt.Errorf("tmpdir: %w", err)
	}
	text := renderCnf(merge(in.baseSettings(), in.settings))
	if err := os.WriteFile(in.CnfPath(), []byte(text), 0o644); err != nil {
		return fmt.Errorf("write my.cnf: %w", err)
	}
	return nil
}
