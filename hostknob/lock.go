package hostknob

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultLockDir holds one lock file per host setting in use, so that two
// worker processes on one host never change the same setting (the second
// would journal the first one's value as "before").
const DefaultLockDir = "/run/writepath/hostknob"

// locks are the lock files of one process, each naming the journal that
// will restore the setting. A lock file naming another journal while
// nobody holds it marks a setting a stopped process left changed.
type locks struct {
	dir     string
	journal string
}

// held is a set of acquired lock files.
type held []*os.File

func lockName(resource string) string {
	return strings.NewReplacer("/", "_", ":", "_").Replace(strings.Trim(resource, "/")) + ".lock"
}

// acquire takes every resource's lock or none.
func (l locks) acquire(resources []string) (held, error) {
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, fmt.Errorf("host knob locks: %w", err)
	}
	var h held
	for _, r := range resources {
		f, err := l.take(r)
		if err != nil {
			h.release(false)
			return nil, err
		}
		h = append(h, f)
	}
	return h, nil
}

func (l locks) take(resource string) (*os.File, error) {
	path := filepath.Join(l.dir, lockName(resource))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("host knob lock %s: %w", path, err)
	}
	owner := readOwner(f)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w: another writepath process changes it (journal %s)", resource, ErrBusy, orUnknown(owner))
	}
	if owner = readOwner(f); owner != "" && owner != l.journal {
		f.Close()
		return nil, fmt.Errorf("%s: %w: a writepath worker that stopped left it changed (journal %s); start that worker again, which restores it, or remove %s",
			resource, ErrBusy, owner, path)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(l.journal), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("host knob lock %s: %w", path, err)
	}
	return f, nil
}

func readOwner(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	return string(bytes.TrimSpace(b[:n]))
}

// release unlocks; with clear the files stop naming the journal (the
// settings are restored).
func (h held) release(clear bool) {
	for _, f := range h {
		if clear {
			f.Truncate(0)
		}
		f.Close() // closing the only descriptor drops the flock
	}
}

// clearOwn empties every lock file in the directory that names this
// journal and that nobody holds: called once the journal is recovered.
func (l locks) clearOwn() {
	files, _ := filepath.Glob(filepath.Join(l.dir, "*.lock"))
	for _, p := range files {
		f, err := os.OpenFile(p, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil && readOwner(f) == l.journal {
			f.Truncate(0)
		}
		f.Close()
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
