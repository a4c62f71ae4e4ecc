package advise

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// serverSections are the option-file groups mysqld and mariadbd read.
func serverSection(name string) bool {
	switch name {
	case "mysqld", "server", "mariadb", "mariadbd", "mysqld_safe":
		return true
	}
	return strings.HasPrefix(name, "mysqld-") || strings.HasPrefix(name, "mariadb-") || strings.HasPrefix(name, "mariadbd-")
}

// ReadOptionFile reads the server groups of a my.cnf (and the files it
// !include's or !includedir's) into option name -> value, names normalised
// to variable spelling ("innodb-flush-method" -> "innodb_flush_method").
// "skip-X"/"disable-X" read as X=OFF, "enable-X" and a bare "X" as X=ON.
// Later settings win, as in the server.
func ReadOptionFile(path string) (map[string]string, error) {
	out := map[string]string{}
	if err := readOptionFile(path, out, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func readOptionFile(path string, out map[string]string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("option file %s: includes nested too deep", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("option file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if err := optionLine(path, line, &in, out, depth); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("option file %s: %w", path, err)
	}
	return nil
}

// optionLine applies one line; in tracks whether we are in a server group.
func optionLine(path, line string, in *bool, out map[string]string, depth int) error {
	switch {
	case line == "" || line[0] == '#' || line[0] == ';':
		return nil
	case line[0] == '[':
		*in = serverSection(strings.ToLower(strings.Trim(line, "[] ")))
		return nil
	case strings.HasPrefix(line, "!include "):
		return readOptionFile(relTo(path, strings.TrimSpace(line[len("!include "):])), out, depth+1)
	case strings.HasPrefix(line, "!includedir "):
		return includeDir(relTo(path, strings.TrimSpace(line[len("!includedir "):])), out, depth)
	case !*in:
		return nil
	}
	name, value := splitOption(line)
	out[name] = value
	return nil
}

// splitOption parses "name = value", "name" and the skip-/enable- forms.
func splitOption(line string) (string, string) {
	name, value, hasValue := strings.Cut(line, "=")
	name = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	name = strings.TrimPrefix(name, "loose_")
	value = strings.Trim(strings.TrimSpace(stripComment(value)), `"'`)
	if hasValue {
		return name, value
	}
	for prefix, v := range map[string]string{"skip_": "OFF", "disable_": "OFF", "enable_": "ON"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			return rest, v
		}
	}
	return name, "ON"
}

// stripComment drops a trailing " # comment" outside quotes.
func stripComment(v string) string {
	if i := strings.Index(v, " #"); i >= 0 && !strings.ContainsAny(v[:i], `"'`) {
		return v[:i]
	}
	return v
}

// includeDir reads every *.cnf in dir, in name order.
func includeDir(dir string, out map[string]string, depth int) error {
	matches, err := filepath.Glob(filepath.Join(dir, "*.cnf"))
	if err != nil {
		return fmt.Errorf("!includedir %s: %w", dir, err)
	}
	sort.Strings(matches)
	for _, m := range matches {
		if err := readOptionFile(m, out, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func relTo(file, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}
