package beneath

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestInRefusesEscapes(t *testing.T) {
	for _, rel := range []string{"", "/etc", "..", "a/../..", "a/..", "../x"} {
		if _, err := In("/tmp", rel); !errors.Is(err, ErrEscape) {
			t.Errorf("In(/tmp, %q) error = %v; want ErrEscape", rel, err)
		}
	}
	for _, root := range []string{"tmp", "/tmp/", "/tmp/../etc"} {
		if _, err := In(root, "x"); err == nil {
			t.Errorf("In(%q, x) succeeded; want an error", root)
		}
	}
	p, err := In("/tmp", "./a//b/")
	if err != nil || p.String() != "/tmp/a/b" || p.Rel() != "a/b" {
		t.Errorf("In(/tmp, ./a//b/) = %v (%q), %v", p, p.Rel(), err)
	}
}

// TestNoSymlinkFollowed: a name that needs a symlink at use time (one
// planted after a guard checked it, pointing in or out) is refused, by
// openat2 and by the component walk alike; the same name without the
// link opens.
func TestNoSymlinkFollowed(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600)
	os.Mkdir(filepath.Join(root, "in"), 0o755)
	os.WriteFile(filepath.Join(root, "in", "f"), []byte("f"), 0o644)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink("in", filepath.Join(root, "rel"))
	os.Symlink("/proc/self/root"+outside, filepath.Join(root, "magic"))
	for _, withOpenat2 := range []bool{true, false} {
		for _, rel := range []string{"out/secret", "rel/f", "magic/secret", "out", "rel"} {
			fd, err := open(root, rel, unix.O_RDONLY, 0, withOpenat2)
			if err == nil {
				unix.Close(fd)
				t.Errorf("open(%s, openat2 %v) followed a symlink", rel, withOpenat2)
			} else if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.EXDEV) && !errors.Is(err, unix.ENOTDIR) {
				t.Errorf("open(%s, openat2 %v) = %v; want ELOOP", rel, withOpenat2, err)
			}
		}
		fd, err := open(root, "in/f", unix.O_RDONLY, 0, withOpenat2)
		if err != nil {
			t.Errorf("open(in/f, openat2 %v) = %v", withOpenat2, err)
			continue
		}
		unix.Close(fd)
	}
}

// TestWalkMatchesOpenat2 opens random names in random trees of
// directories, files and symlinks both ways: the two agree on success and
// on the file, and what opens is exactly root/name (no link followed).
func TestWalkMatchesOpenat2(t *testing.T) {
	if !haveOpenat2() {
		t.Fatal("this kernel has no openat2; the test compares against it")
	}
	names := []string{"a", "b", "c"}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		root := t.TempDir()
		dirs := []string{root}
		for range 10 {
			d := filepath.Join(dirs[rng.IntN(len(dirs))], names[rng.IntN(3)])
			switch rng.IntN(3) {
			case 0:
				if os.Mkdir(d, 0o755) == nil {
					dirs = append(dirs, d)
				}
			case 1:
				os.WriteFile(d, nil, 0o644)
			default:
				os.Symlink([]string{"a", "../b", "/tmp", root}[rng.IntN(4)], d)
			}
		}
		for range 30 {
			parts := make([]string, 1+rng.IntN(4))
			for i := range parts {
				parts[i] = names[rng.IntN(3)]
			}
			rel := strings.Join(parts, "/")
			fa, ea := open(root, rel, unix.O_PATH, 0, true)
			fw, ew := open(root, rel, unix.O_PATH, 0, false)
			if (ea == nil) != (ew == nil) {
				t.Errorf("seed %d: open(%s): openat2 %v, walk %v", seed, rel, ea, ew)
			}
			for _, fd := range []int{fa, fw} {
				if fd < 0 {
					continue
				}
				at, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
				if at != filepath.Join(root, rel) {
					t.Errorf("seed %d: open(%s) opened %s", seed, rel, at)
				}
				unix.Close(fd)
			}
		}
	}
}

func TestMkdirAllRemoveReadFile(t *testing.T) {
	root := t.TempDir()
	p, err := In(root, "x/y/z")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.MkdirAll(0o750); err != nil {
		t.Fatal(err)
	}
	f, err := p.Join("pw")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.OpenFile(os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("secret\n")
	w.Close()
	if b, err := f.ReadFile(64); err != nil || string(b) != "secret\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := f.ReadFile(3); err == nil {
		t.Error("ReadFile(limit 3) of 7 bytes succeeded")
	}
	if err := f.Remove(); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Exists(); ok || err != nil {
		t.Errorf("after Remove: exists %v, %v", ok, err)
	}
	if err := f.Remove(); err != nil {
		t.Errorf("second Remove = %v; want nil", err)
	}
	os.Symlink(t.TempDir(), filepath.Join(root, "link"))
	q, _ := In(root, "link/new")
	if err := q.MkdirAll(0o755); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("MkdirAll through a symlink = %v; want ELOOP", err)
	}
}
