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

// baseSettings is the part of my.cnf that places the instance: paths, the
// account it runs as, no TCP unless asked for, and what a sandbox needs to
// coexist with other servers on the host.
func (in *Instance) baseSettings(u osUser, initFile bool) []Setting {
	s := []Setting{
		{"datadir", in.DataDir()},
		{"socket", in.socket},
	}
	if in.listen == "" {
		// Only the socket, in a 0700 directory: nobody else on the host
		// reaches the server at all.
		s = append(s, Setting{"skip-networking", ""})
	} else {
		s = append(s, Setting{"port", strconv.Itoa(in.port)}, Setting{"bind-address", in.listen})
	}
	s = append(s, []Setting{
		{"pid-file", in.PIDFile()},
		{"log-error", in.ErrorLogPath()},
		// Its own tmpdir: implicit temporary tables of one server must not
		// meet another server's (or a /tmp cleaner) in a shared /tmp.
		{"tmpdir", in.TmpDir()},
		{"skip-name-resolve", ""},
		// Many client threads on a small sandbox: the defaults (151) are
		// too few for --threads 256.
		{"max_connections", "1000"},
	}...)
	if os.Geteuid() == 0 {
		// Started by root, the server drops to its own account (mysqld
		// refuses to run as root unless told to, which is the last resort
		// when no mysql account exists).
		s = append(s, Setting{"user", u.name})
	}
	if initFile {
		s = append(s, Setting{"init-file", in.initFile()})
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
// after making the directories it names for the server's account; with
// initFile the server runs the one-shot init file at this start.
func (in *Instance) writeCnf(initFile bool) error {
	if err := in.prepareLayoutLocked(); err != nil {
		return err
	}
	u, err := in.serverUserLocked()
	if err != nil {
		return err
	}
	text := renderCnf(merge(in.baseSettings(u, initFile), in.settings))
	if err := os.WriteFile(in.CnfPath(), []byte(text), 0o644); err != nil {
		return fmt.Errorf("write my.cnf: %w", err)
	}
	return nil
}
