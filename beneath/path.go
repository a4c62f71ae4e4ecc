package beneath

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrEscape is wrapped by a name that would leave its root ("..", an
// absolute name) or needs a symbolic link, which a checked Path never does.
var ErrEscape = errors.New("not a plain name beneath the root")

// Path is a file named beneath a trusted root. The zero Path is invalid.
type Path struct {
	root string // absolute directory without symlinks; "" = unconfined
	rel  string // confined: clean, relative, no ".."; "." is the root
}

// Unconfined is an ordinary path, used as given (a local run's, with no
// guard to check it).
func Unconfined(path string) Path { return Path{rel: path} }

// In names rel beneath root. root must be absolute and clean; rel must be
// relative, without ".." (after cleaning). It checks the form only: the
// operations check the files.
func In(root, rel string) (Path, error) {
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return Path{}, fmt.Errorf("root %q: want an absolute, clean directory", root)
	}
	if err := plainName(rel); err != nil {
		return Path{}, err
	}
	return Path{root: root, rel: filepath.Clean(rel)}, nil
}

// plainName refuses absolute names and any ".." component.
func plainName(rel string) error {
	if rel == "" || filepath.IsAbs(rel) {
		return fmt.Errorf("name %q: %w", rel, ErrEscape)
	}
	for _, c := range strings.Split(rel, "/") {
		if c == ".." {
			return fmt.Errorf("name %q: %w", rel, ErrEscape)
		}
	}
	return nil
}

// Confined reports whether p is held beneath a root.
func (p Path) Confined() bool { return p.root != "" }

// Root is the trusted root ("" when unconfined).
func (p Path) Root() string { return p.root }

// Rel is the name beneath the root (the whole path when unconfined).
func (p Path) Rel() string { return p.rel }

// String is the absolute path for messages and for programs that take a
// path (a server's my.cnf): the same file the operations open, as long as
// nothing on the way changes.
func (p Path) String() string {
	if p.root == "" {
		return p.rel
	}
	if p.rel == "." {
		return p.root
	}
	return filepath.Join(p.root, p.rel)
}

// Join names elem under p. elem must be a plain relative name.
func (p Path) Join(elem string) (Path, error) {
	if err := plainName(elem); err != nil {
		return Path{}, err
	}
	if p.root == "" {
		return Unconfined(filepath.Join(p.rel, elem)), nil
	}
	return Path{root: p.root, rel: filepath.Join(p.rel, elem)}, nil
}

// Dir is p's parent, never above its root.
func (p Path) Dir() Path {
	if p.root == "" {
		return Unconfined(filepath.Dir(p.rel))
	}
	return Path{root: p.root, rel: filepath.Dir(p.rel)}
}

// Base is p's last element.
func (p Path) Base() string { return filepath.Base(p.String()) }

// Open opens p with open(2) flags (O_CLOEXEC is added) and returns the
// descriptor, which the caller closes.
func (p Path) Open(flags int, perm uint32) (int, error) {
	if p.root == "" {
		fd, err := unix.Open(p.rel, flags|unix.O_CLOEXEC, perm)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: p.rel, Err: err}
		}
		return fd, nil
	}
	fd, err := open(p.root, p.rel, flags, perm, haveOpenat2())
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: p.String(), Err: err}
	}
	return fd, nil
}

// OpenFile is Open as an *os.File.
func (p Path) OpenFile(flags int, perm os.FileMode) (*os.File, error) {
	fd, err := p.Open(flags, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p.String()), nil
}

// Stat is stat(2) of p.
func (p Path) Stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := p.Open(unix.O_PATH, 0)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return st, &os.PathError{Op: "stat", Path: p.String(), Err: err}
	}
	return st, nil
}

// Statfs is statfs(2) of the filesystem holding p.
func (p Path) Statfs() (unix.Statfs_t, error) {
	var st unix.Statfs_t
	fd, err := p.Open(unix.O_PATH, 0)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	if err := unix.Fstatfs(fd, &st); err != nil {
		return st, &os.PathError{Op: "statfs", Path: p.String(), Err: err}
	}
	return st, nil
}

// Exists reports whether p names an existing file; errors other than
// "does not exist" are returned.
func (p Path) Exists() (bool, error) {
	_, err := p.Stat()
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	return err == nil, err
}

// Remove unlinks the file p (not a directory) in its parent, opened
// beneath the root. A missing file is not an error.
func (p Path) Remove() error {
	if p.root == "" {
		if err := os.Remove(p.rel); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if p.rel == "." {
		return &os.PathError{Op: "remove", Path: p.String(), Err: ErrEscape}
	}
	dir, err := p.Dir().Open(unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Unlinkat(dir, filepath.Base(p.rel), 0); err != nil && err != unix.ENOENT {
		return &os.PathError{Op: "remove", Path: p.String(), Err: err}
	}
	return nil
}

// MkdirAll creates p and any missing parent beneath the root, each with
// perm, one directory at a time in its opened parent.
func (p Path) MkdirAll(perm os.FileMode) error {
	if p.root == "" {
		return os.MkdirAll(p.rel, perm)
	}
	if ok, err := p.Exists(); ok || err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	if p.rel != "." {
		if err := p.Dir().MkdirAll(perm); err != nil {
			return err
		}
	}
	dir, err := p.Dir().Open(unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Mkdirat(dir, filepath.Base(p.rel), uint32(perm.Perm())); err != nil && err != unix.EEXIST {
		return &os.PathError{Op: "mkdir", Path: p.String(), Err: err}
	}
	return nil
}

// ReadFile reads p, at most limit bytes (a larger file is an error).
func (p Path) ReadFile(limit int64) ([]byte, error) {
	f, err := p.OpenFile(os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes", p, limit)
	}
	return b, nil
}
