// Package guard decides which host resources a job sent to a worker may
// touch: every path must resolve (symlinks and ".." followed first) inside
// the worker's data directory or an explicitly allowed path, and is handed
// back confined beneath that root (package beneath), so the file checked is
// the file opened; server binaries must be on an allow-list and are
// executed by their resolved path; sizes must fit the free space and the
// memory budget; server settings that load code, privileged actions and
// database endpoints beyond loopback need the operator's opt-in by name.
// A job over a limit is refused with the reason before any I/O.
package guard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
	"github.com/writepath/writepath/workload"
)

// Config is the operator's policy, from the worker's flags.
type Config struct {
	// DataDir is --data-dir: the root of relative paths, always allowed.
	DataDir string
	// AllowPaths are --allow-path: more directories (or files, devices).
	AllowPaths []string
	// AllowBinaries are --allow-binary: server executables jobs may start.
	AllowBinaries []string
	// AllowSettings are --allow-setting: server settings (as named by the
	// server, dashes or underscores) that need an opt-in.
	AllowSettings []string
	// AllowPrivileged are --allow-privileged: host-wide actions.
	AllowPrivileged []string
	// AllowMySQL are --allow-mysql: database endpoints beyond loopback,
	// "host:port" or a socket path.
	AllowMySQL []string
	// MaxJobMemory bounds the buffers one job may hold (bytes); 0 means
	// DefaultMaxJobMemory.
	MaxJobMemory int64
}

// DefaultMaxJobMemory is the buffer budget of a job on a worker without
// --max-job-memory: far above any fio job of the field (4 jobs x iodepth
// 32 x 1 MiB = 128 MiB), far below what would push a database host into
// swap.
const DefaultMaxJobMemory = 1 << 30

// Privileges are the privileged actions --allow-privileged names.
var Privileges = []string{"drop-caches", "power-loss"}

// Policy is a worker's guard. Its methods are safe for concurrent use (it is
// immutable after New).
type Policy struct {
	dataDir    string
	roots      []string // resolved; roots[0] is the data dir
	binaries   []string // resolved
	settings   map[string]bool
	privileged map[string]bool
	endpoints  []string // host:port as given, or resolved socket paths
	memory     int64
}

var _ workload.Guard = (*Policy)(nil)

// New builds a policy from the worker's flags. Roots are resolved now, so a
// symlinked data dir is compared by its target; relative flags are taken
// from the working directory, as the worker's own file operations take them.
func New(c Config) (*Policy, error) {
	if c.DataDir == "" {
		return nil, fmt.Errorf("guard: a data directory is required")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("guard: working directory: %w", err)
	}
	p := &Policy{settings: map[string]bool{}, privileged: map[string]bool{}, memory: c.MaxJobMemory}
	if p.memory <= 0 {
		p.memory = DefaultMaxJobMemory
	}
	if p.dataDir, err = resolve(cwd, c.DataDir); err != nil {
		return nil, fmt.Errorf("guard: data dir: %w", err)
	}
	p.roots = append(p.roots, p.dataDir)
	for _, a := range c.AllowPaths {
		r, err := resolve(cwd, a)
		if err != nil {
			return nil, fmt.Errorf("guard: --allow-path %s: %w", a, err)
		}
		p.roots = append(p.roots, r)
	}
	for _, b := range c.AllowBinaries {
		r, err := resolve(cwd, b)
		if err != nil {
			return nil, fmt.Errorf("guard: --allow-binary %s: %w", b, err)
		}
		p.binaries = append(p.binaries, r)
	}
	for _, s := range c.AllowSettings {
		p.settings[SettingName(s)] = true
	}
	for _, a := range c.AllowPrivileged {
		if !slices.Contains(Privileges, a) {
			return nil, fmt.Errorf("guard: --allow-privileged %s: want one of %s", a, strings.Join(Privileges, ", "))
		}
		p.privileged[a] = true
	}
	for _, e := range c.AllowMySQL {
		norm, err := endpoint(cwd, e)
		if err != nil {
			return nil, fmt.Errorf("guard: --allow-mysql %s: %w", e, err)
		}
		p.endpoints = append(p.endpoints, norm)
	}
	return p, nil
}

// Path resolves path (relative paths against the data dir) and, if it lies
// inside an allowed root, returns it confined beneath that root.
func (p *Policy) Path(path string) (beneath.Path, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return beneath.Path{}, fmt.Errorf("path %q: contains a NUL byte", path)
	}
	r, err := resolve(p.dataDir, path)
	if err != nil {
		return beneath.Path{}, fmt.Errorf("path %s: %w", path, err)
	}
	root := ""
	for _, c := range p.roots {
		if within(c, r) && len(c) > len(root) {
			root = c
		}
	}
	if root == "" {
		return beneath.Path{}, fmt.Errorf("path %s resolves to %s: %w (%s)", path, r, ErrOutside, strings.Join(p.roots, ", "))
	}
	return confine(root, r)
}

// confine expresses the resolved path r under root as a beneath.Path. Its
// root is the nearest existing directory at or above root (a root that
// does not exist yet, or a file root, has none of its own to open); the
// name below it is plain, so nothing else is reachable.
func confine(root, r string) (beneath.Path, error) {
	base := root
	for {
		fi, err := os.Lstat(base)
		if err == nil && fi.IsDir() || base == "/" {
			break
		}
		base = filepath.Dir(base)
	}
	rel := "."
	if r != base {
		rel = strings.TrimPrefix(r, strings.TrimSuffix(base, "/")+"/")
	}
	return beneath.In(base, rel)
}

// Binary checks that path, resolved, is an allowed server binary and
// returns the resolved path, which is what the caller must execute. A bare
// name is looked up in PATH, as exec does when it starts it.
func (p *Policy) Binary(path string) (string, error) {
	full := path
	if !filepath.IsAbs(path) && strings.Contains(path, "/") {
		// exec would take it from the worker's working directory, which
		// the allow-list does not describe.
		return "", fmt.Errorf("binary %s: %w (give an absolute path or a bare name)", path, ErrBinary)
	}
	if !strings.Contains(path, "/") {
		var err error
		if full, err = exec.LookPath(path); err != nil {
			return "", fmt.Errorf("binary %s: %w", path, err)
		}
	}
	r, err := resolve("/", full)
	if err != nil {
		return "", fmt.Errorf("binary %s: %w", path, err)
	}
	if slices.Contains(p.binaries, r) {
		return r, nil
	}
	if len(p.binaries) == 0 {
		return "", fmt.Errorf("binary %s: %w (the list is empty; start the worker with --allow-binary %s)", path, ErrBinary, r)
	}
	return "", fmt.Errorf("binary %s: %w (allowed: %s; add it with --allow-binary %s)", path, ErrBinary, strings.Join(p.binaries, ", "), r)
}

// Space reports whether the filesystem holding dir (or its nearest existing
// ancestor) has need bytes available to unprivileged writers.
func (p *Policy) Space(dir string, need int64) error {
	d, err := p.Path(dir)
	if err != nil {
		return err
	}
	for {
		st, err := d.Statfs()
		if err == nil {
			free := int64(st.Bavail) * st.Bsize
			if need > free {
				return fmt.Errorf("%s needs %d bytes, %d free: %w", dir, need, free, ErrNoSpace)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOENT) || d.Rel() == "." {
			return fmt.Errorf("statfs %s: %w", d, err)
		}
		d = d.Dir()
	}
}

// Memory reports whether a job may hold need bytes of I/O buffers.
func (p *Policy) Memory(need int64) error {
	if need > p.memory {
		return fmt.Errorf("job needs %s of buffers, this worker's budget is %s: %w (raise it with --max-job-memory)",
			sizeText(need), sizeText(p.memory), ErrMemory)
	}
	return nil
}

// Allow reports whether the operator opted in to name.
func (p *Policy) Allow(kind workload.Permission, name string) error {
	switch kind {
	case workload.Setting:
		if p.settings[SettingName(name)] {
			return nil
		}
		return fmt.Errorf("server setting %s: %w (it loads code, runs SQL, reaches files beyond the guard or weakens access; allow it with --allow-setting %s)",
			name, ErrNotAllowed, SettingName(name))
	case workload.Privileged:
		if p.privileged[name] {
			return nil
		}
		return fmt.Errorf("%s: %w (a host-wide action; allow it with --allow-privileged %s)", name, ErrNotAllowed, name)
	case workload.Endpoint:
		return p.endpoint(name)
	}
	return fmt.Errorf("%s %s: %w", kind, name, ErrNotAllowed)
}

// SettingName is the form --allow-setting compares: lower case,
// underscores (the server treats dashes and underscores alike).
func SettingName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
}
