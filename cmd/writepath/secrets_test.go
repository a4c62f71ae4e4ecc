package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload/oltp"
)

// TestPasswordNeverStored (issue 13, point 10): `run oltp --mysql-password`
// on the embedded fabric reaches the worker through a private file, and
// the store file holds no trace of it; towards a coordinator it is refused
// before anything is sent, as is a campaign naming it.
func TestPasswordNeverStored(t *testing.T) {
	testenv.MySQLServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "wp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o711)
	inst, err := mysqld.New(ctx, mysqld.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	if err := inst.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pw, _ := inst.Password()
	data := t.TempDir()
	db := filepath.Join(data, "writepath.db")
	var out, errOut bytes.Buffer
	args := []string{"oltp", "prepare", "--show", "none", "--data-dir", data, "--db", db, "--mysql-socket=" + inst.Socket(),
		"--mysql-user=root", "--mysql-password", pw, "--tables=1", "--table-size=100"}
	if err := runKind(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("run oltp prepare --mysql-password: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	stored, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte(pw)) {
		t.Errorf("the store %s holds the password", db)
	}
	if !bytes.Contains(stored, []byte("mysql-password-file")) && !bytes.Contains(stored, []byte("wp-pw-")) {
		t.Errorf("the stored spec names no password file")
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "wp-pw-*", "password")); len(left) > 0 {
		for _, f := range left {
			if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) == pw {
				t.Errorf("the private password file %s outlived the command", f)
			}
		}
	}
	err = runKind(ctx, []string{"oltp", "--coordinator", "127.0.0.1:1", "--mysql-password=" + pw}, &out, &errOut)
	if !errors.Is(err, errSecretStored) {
		t.Errorf("run oltp --coordinator ... --mysql-password: %v; want refused (errSecretStored)", err)
	}
	if _, err := buildKindSpec("oltp")([]string{"--mysql_password=x"}); !errors.Is(err, errSecretStored) {
		t.Errorf("campaign cell with --mysql_password: %v; want refused", err)
	}
}

func TestSealPassword(t *testing.T) {
	out, cleanup, err := sealSecrets(oltp.Secrets(), []string{"--tables=1", "--mysql-password", "p w", "--mysql_password=q"}, true)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, a := range out {
		if strings.Contains(a, "p w") || strings.HasSuffix(a, "=q") {
			t.Errorf("sealed args %q still carry a password", out)
		}
		if f, ok := strings.CutPrefix(a, "--mysql-password-file="); ok {
			files = append(files, f)
		}
	}
	if len(files) != 2 || len(out) != 3 {
		t.Fatalf("sealed args = %q", out)
	}
	for i, want := range []string{"p w\n", "q\n"} {
		st, err := os.Stat(files[i])
		b, _ := os.ReadFile(files[i])
		dst, _ := os.Stat(filepath.Dir(files[i]))
		if err != nil || st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 || string(b) != want {
			t.Errorf("password file %s: %v %v (dir %v), %q; want 0600 in 0700 holding %q", files[i], st.Mode(), err, dst.Mode(), b, want)
		}
	}
	cleanup()
	for _, f := range files {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after cleanup", f)
		}
	}
}
