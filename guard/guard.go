// Package guard decides which host resources a job sent to a worker may
// touch: every path must resolve (symlinks and ".." followed first) inside
// the worker's data directory or an explicitly allowed path, server
// binaries must be on an allow-list, and sizes must fit the free space.
// A job over a limit is refused with the reason before any I/O.
package guard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrOutside is wrapped by refusals of paths outside the allowed roots.
var ErrOutside = errors.New("outside the worker's allowed paths")

// ErrBinary is wrapped by refusals of binaries not on the allow-list.
var ErrBinary = errors.New("binary not on the worker's allow-list")

// ErrNoSpace is wrapped when a job needs more space than is free.
var ErrNoSpace = errors.New("not enough free space")

// Policy is a worker's guard. Its methods are safe for concurrent use (it is
// immutable after New).
type Policy struct {
	dataDir  string
	roots    []string
	binaries []string
}

// New builds a policy from the worker's --data-dir, --allow-path and
// --allow-binary flags. Roots are resolved now, so a symlinked data dir is
// compared by its target; relative flags are taken from the working
// directory, as the worker's own file operations take them.
func New(dataDir string, allow, binaries []string) (*Policy, error) {
	p := &Policy{}
	if dataDir == "" {
		return nil, fmt.Errorf("guard: a data directory is required")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("guard: working directory: %w", err)
	}
	if p.dataDir, err = resolve(cwd, dataDir); err != nil {
		return nil, fmt.Errorf("guard: data dir: %w", err)
	}
	p.roots = append(p.roots, p.dataDir)
	for _, a := range allow {
		r, err := resolve(cwd, a)
		if err != nil {
			return nil, fmt.Errorf("guard: --allow-path %s: %w", a, err)
		}
		p.roots = append(p.roots, r)
	}
	for _, b := range binaries {
		r, err := resolve(cwd, b)
		if err != nil {
			return nil, fmt.Errorf("guard: --allow-binary %s: %w", b, err)
		}
		p.binaries = append(p.binaries, r)
	}
	return p, nil
}

// Path resolves path (relative paths against the data dir) and returns it
// if it lies inside an allowed root.
func (p *Policy) Path(path string) (string, error) {
	r, err := resolve(p.dataDir, path)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", path, err)
	}
	for _, root := range p.roots {
		if within(root, r) {
			return r, nil
		}
	}
	return "", fmt.Errorf("path %s resolves to %s: %w (%s)", path, r, ErrOutside, strings.Join(p.roots, ", "))
}

// Binary reports whether path, resolved, is an allowed server binary. A
// bare name is looked up in PATH, as exec does when it starts it.
func (p *Policy) Binary(path string) error {
	full := path
	if !filepath.IsAbs(path) && strings.Contains(path, "/") {
		// exec would take it from the worker's working directory, which
		// the allow-list does not describe.
		return fmt.Errorf("binary %s: %w (give an absolute path or a bare name)", path, ErrBinary)
	}
	if !strings.Contains(path, "/") {
		var err error
		if full, err = exec.LookPath(path); err != nil {
			return fmt.Errorf("binary %s: %w", path, err)
		}
	}
	r, err := resolve("/", full)
	if err != nil {
		return fmt.Errorf("binary %s: %w", path, err)
	}
	for _, b := range p.binaries {
		if b == r {
			return nil
		}
	}
	if len(p.binaries) == 0 {
		return fmt.Errorf("binary %s: %w (the list is empty; start the worker with --allow-binary %s)", path, ErrBinary, r)
	}
	return fmt.Errorf("binary %s: %w (allowed: %s; add it with --allow-binary %s)", path, ErrBinary, strings.Join(p.binaries, ", "), r)
}

// Space reports whether the filesystem holding dir (or its nearest existing
// ancestor) has need bytes available to unprivileged writers.
func (p *Policy) Space(dir string, need int64) error {
	d, err := p.Path(dir)
	if err != nil {
		return err
	}
	for {
		var st unix.Statfs_t
		err := unix.Statfs(d, &st)
		if err == nil {
			free := int64(st.Bavail) * st.Bsize
			if need > free {
				return fmt.Errorf("%s needs %d bytes, %d free: %w", dir, need, free, ErrNoSpace)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOENT) || d == "/" {
			return fmt.Errorf("statfs %s: %w", d, err)
		}
		d = filepath.Dir(d)
	}
}

func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
}

// resolve makes path absolute against base and follows every symlink and
// ".." in order, as the kernel would. Components that do not exist yet are
// taken literally (they cannot be symlinks), so a file a job will create is
// judged by where it would be created.
func resolve(base, path string) (string, error) {
	if !filepath.IsAbs(path) {
		// Not filepath.Join: it would clean ".." lexically, before the
		// symlinks it may follow are resolved.
		path = base + "/" + path
	}
	return walk("/", strings.Split(path, "/"), 0)
}

const maxLinks = 40 // the kernel's MAXSYMLINKS

func walk(prefix string, comps []string, links int) (string, error) {
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			prefix = filepath.Dir(prefix)
			continue
		}
		next := filepath.Join(prefix, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			prefix = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			prefix = "/"
		}
		return walk(prefix, append(strings.Split(target, "/"), comps[i+1:]...), links)
	}
	return prefix, nil
}
