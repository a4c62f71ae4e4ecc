package guard

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	extra := filepath.Join(tmp, "extra")
	secret := filepath.Join(tmp, "secret")
	for _, d := range []string{data, extra, secret, filepath.Join(data, "sub")} {
		os.MkdirAll(d, 0o755)
	}
	os.Symlink(secret, filepath.Join(data, "escape"))       // points outside
	os.Symlink(extra, filepath.Join(data, "toextra"))       // points to an allowed root
	os.Symlink("../data/sub", filepath.Join(extra, "back")) // relative, inside
	os.Symlink("loop", filepath.Join(data, "loop"))
	p, err := New(Config{DataDir: data, AllowPaths: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		want    string // resolved path, or "" for a refusal
		outside bool
	}{
		{"f.dat", filepath.Join(data, "f.dat"), false},
		{"sub/new/f.dat", filepath.Join(data, "sub/new/f.dat"), false},
		{"../secret/x", "", true},
		{"sub/../../secret/x", "", true},
		{"escape/x", "", true},
		{"escape/../data/x", filepath.Join(data, "x"), false}, // ".." after a symlink is taken from its target: secret/.. = tmp
		{"escape/../secret/x", "", true},
		{"sub/../escape/x", "", true},
		{"toextra/y", filepath.Join(extra, "y"), false},
		{filepath.Join(extra, "back/z"), filepath.Join(data, "sub/z"), false},
		{"/etc/passwd", "", true},
		{"nonexistent/../../secret", "", true},
		{"loop/x", "", false},
	}
	for _, tt := range tests {
		gotPath, err := p.Path(tt.in)
		got := gotPath.String()
		switch {
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("Path(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.want == "" && err == nil:
			t.Errorf("Path(%q) = %q; want a refusal", tt.in, got)
		case tt.outside && !errors.Is(err, ErrOutside):
			t.Errorf("Path(%q) error = %v; want ErrOutside", tt.in, err)
		}
	}
}

func TestBinaryAndSpace(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "mariadbd")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	link := filepath.Join(tmp, "mysqld")
	os.Symlink(bin, link)
	p, err := New(Config{DataDir: tmp, AllowBinaries: []string{link}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Binary(link); err != nil || got != bin {
		t.Errorf("Binary(%s) = %q, %v; want allowed as %s (the allow-list entry links to it)", link, got, err, bin)
	}
	if _, err := p.Binary("/bin/sh"); !errors.Is(err, ErrBinary) {
		t.Errorf("Binary(/bin/sh) = %v; want ErrBinary", err)
	}
	if err := p.Space("new/dir", 1<<20); err != nil {
		t.Errorf("Space(1 MiB) = %v", err)
	}
	if err := p.Space(".", 1<<62); !errors.Is(err, ErrNoSpace) {
		t.Errorf("Space(4 EiB) = %v; want ErrNoSpace", err)
	}
}

// TestRelativeFlagsFromWorkingDir: `worker --data-dir data` (or the default
// ".") means the directory under the working directory, never the root.
func TestRelativeFlagsFromWorkingDir(t *testing.T) {
	tmp := t.TempDir()
	os.Mkdir(filepath.Join(tmp, "data"), 0o755)
	t.Chdir(tmp)
	for _, dir := range []string{"data", ".", "./data/../data"} {
		p, err := New(Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Path("/etc/passwd"); !errors.Is(err, ErrOutside) {
			t.Errorf("New(%q).Path(/etc/passwd) = %v; want ErrOutside", dir, err)
		}
	}
	p, _ := New(Config{DataDir: "data"})
	if got, err := p.Path("f"); err != nil || got.String() != filepath.Join(tmp, "data", "f") {
		t.Errorf(`New("data").Path("f") = %q, %v; want %s`, got, err, filepath.Join(tmp, "data", "f"))
	}
}

func TestBinaryNames(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{DataDir: t.TempDir(), AllowBinaries: []string{sh}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Binary("sh"); err != nil {
		t.Errorf("Binary(sh) with %s allowed = %v", sh, err)
	}
	for _, bad := range []string{strings.TrimPrefix(sh, "/"), "./sh", "no-such-binary-here"} {
		if _, err := p.Binary(bad); err == nil {
			t.Errorf("Binary(%q) = nil; want a refusal", bad)
		}
	}
}
