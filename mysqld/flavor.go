package mysqld

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Flavor is the server family.
type Flavor string

// The flavors this package manages.
const (
	MySQL   Flavor = "mysql"
	MariaDB Flavor = "mariadb"
)

// Version is a server's flavor and version, as read from `BINARY --version`.
type Version struct {
	Flavor              Flavor
	Major, Minor, Patch int
	// Raw is the whole --version line.
	Raw string
}

func (v Version) String() string {
	return fmt.Sprintf("%s %d.%d.%d", v.Flavor, v.Major, v.Minor, v.Patch)
}

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

var verRE = regexp.MustCompile(`Ver (\d+)\.(\d+)\.(\d+)(\S*)`)

// ParseVersion reads the output of `mysqld --version`, e.g.
// "/usr/sbin/mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu" or
// "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)".
func ParseVersion(out string) (Version, error) {
	line := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	m := verRE.FindStringSubmatch(line)
	if m == nil {
		return Version{}, fmt.Errorf("%w: %q", ErrUnknownFlavor, line)
	}
	v := Version{Raw: line, Flavor: MySQL}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	if strings.Contains(strings.ToLower(line), "mariadb") {
		v.Flavor = MariaDB
	}
	return v, nil
}

// Detect runs `binary --version` and parses it.
func Detect(ctx context.Context, binary string) (Version, error) {
	out, err := exec.CommandContext(ctx, binary, "--no-defaults", "--version").CombinedOutput()
	if err != nil {
		return Version{}, fmt.Errorf("detect %s: %w: %s", binary, err, strings.TrimSpace(string(out)))
	}
	v, err := ParseVersion(string(out))
	if err != nil {
		return Version{}, fmt.Errorf("detect %s: %w", binary, err)
	}
	return v, nil
}

// candidates are the server binaries FindBinary looks for, in order.
var candidates = []string{"mariadbd", "mysqld", "/usr/sbin/mariadbd", "/usr/sbin/mysqld", "/usr/libexec/mysqld"}

// FindBinary returns the first installed server binary (mariadbd or mysqld
// on PATH or in the usual sbin directories).
func FindBinary() (string, error) {
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no mysqld or mariadbd found on PATH or in /usr/sbin; install mariadb-server or mysql-server, or pass --binary")
}

// installDB returns the mariadb-install-db (or mysql_install_db) beside a
// MariaDB server binary (in its directory, ../bin or ../scripts), or on
// PATH when orPath is set. A guarded instance (Options.Exec) takes it only
// from beside the binary the guard allowed: the same installation.
func installDB(binary string, orPath bool) (string, error) {
	dir := filepath.Dir(binary)
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, "..", "bin", name), filepath.Join(dir, "..", "scripts", name)} {
			if _, err := exec.LookPath(p); err == nil {
				return p, nil
			}
		}
		if !orPath {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if !orPath {
		return "", fmt.Errorf("mariadb-install-db not found beside %s (in its directory, ../bin or ../scripts)", binary)
	}
	return "", fmt.Errorf("mariadb-install-db not found beside %s or on PATH", binary)
}
