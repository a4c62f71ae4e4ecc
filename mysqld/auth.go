package mysqld

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A fresh datadir's root@localhost has no password (MySQL's
// --initialize-insecure, mariadb-install-db's normal method), and MariaDB
// adds root@127.0.0.1, root@::1 and root@HOSTNAME without one. Every
// instance therefore gets a random root password, kept in DIR/root.password
// (mode 0600, the caller's): the first start after Init or Restore sets it
// on every root account through a one-shot init file (in the 0700 run
// directory, removed once the server is ready) and drops root@HOSTNAME.
// Everything that connects to the instance (oltp, the crash harness,
// telemetry, `writepath mysqld status`, advise) reads it with Password.

// passwordFile is DIR/root.password.
func (in *Instance) passwordFile() string { return filepath.Join(in.dir, "root.password") }

// PasswordFile is the file holding root's password (mode 0600).
func (in *Instance) PasswordFile() string { return in.passwordFile() }

// Password is root's password, creating it on first use.
func (in *Instance) Password() (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.passwordLocked()
}

func (in *Instance) passwordLocked() (string, error) {
	b, err := os.ReadFile(in.passwordFile())
	if err == nil {
		if pw := strings.TrimSpace(string(b)); pw != "" {
			return pw, nil
		}
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("root password: %w", err)
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("root password: %w", err)
	}
	pw := base64.RawURLEncoding.EncodeToString(raw[:]) // letters, digits, - and _: no quoting needed
	f, err := os.OpenFile(in.passwordFile(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("root password: %w", err)
	}
	if _, err := f.WriteString(pw + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("root password: %w", err)
	}
	return pw, f.Close()
}

// initFile is the one-shot init file that sets the password.
func (in *Instance) initFile() string { return filepath.Join(in.RunDir(), "set-root-password.sql") }

// writeInitFileLocked writes the SQL that secures root, readable by the
// server's account only.
func (in *Instance) writeInitFileLocked() error {
	pw, err := in.passwordLocked()
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		fmt.Fprintf(&b, "ALTER USER IF EXISTS 'root'@'%s' IDENTIFIED BY '%s';\n", host, pw)
	}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		fmt.Fprintf(&b, "DROP USER IF EXISTS 'root'@'%s';\n", quoteSQL(h))
	}
	f, err := os.OpenFile(in.initFile(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("init file: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("init file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("init file: %w", err)
	}
	u, err := in.serverUserLocked()
	if err != nil {
		return err
	}
	if u.uid != os.Geteuid() {
		return os.Chown(in.initFile(), u.uid, u.gid)
	}
	return nil
}

// quoteSQL escapes s for a single-quoted SQL string.
func quoteSQL(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s)
}
