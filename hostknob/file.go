package hostknob

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeAttr writes one value to a sysfs or procfs file in one write(2), as
// `echo v > file` does (O_TRUNC too: sysfs ignores it, a plain file needs it). The kernel's refusal (EINVAL, ERANGE, EBUSY...)
// wraps ErrRefused.
func writeAttr(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	_, werr := f.WriteString(v)
	cerr := f.Close()
	var errno unix.Errno
	switch {
	case errors.As(werr, &errno) && errno != unix.EACCES && errno != unix.EPERM:
		return fmt.Errorf("%w (%v)", ErrRefused, errno)
	case werr != nil:
		return fmt.Errorf("write %s: %w", path, werr)
	case cerr != nil:
		return fmt.Errorf("write %s: %w", path, cerr)
	}
	return nil
}

// fileRestorer writes a Change's value back into a knob file. A journal
// may have been written by someone else, so it refuses any path that is
// not a knob's own file under the host's sysfs queues or /proc/sys/vm: at
// worst a forged journal sets a knob to a value the kernel accepts.
type fileRestorer struct{ sys, proc string }

var _ Restorer = fileRestorer{}

// Restore writes c.Before unless the file already holds it: writing the
// scheduler in force again still resets nr_requests.
func (r fileRestorer) Restore(c Change) error {
	if err := r.allowed(c.Target); err != nil {
		return err
	}
	if cur, err := readAttr(c.Target); err == nil && cur == c.Before {
		return nil
	}
	return writeAttr(c.Target, c.Before)
}

func (r fileRestorer) allowed(path string) error {
	base := filepath.Base(path)
	k, ok := lookup(base)
	if ok && filepath.Clean(path) == path && k.name == base {
		switch k.scope {
		case queueLeaves, queueTop:
			if m, _ := filepath.Match(filepath.Join(r.sys, "class", "block", "*", "queue", base), path); m {
				return nil
			}
		case vmSysctl:
			if path == filepath.Join(r.proc, "sys", "vm", base) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: %s is not a host knob's file", ErrJournal, path)
}
