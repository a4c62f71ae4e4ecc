package powerloss

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// opKind names a namespace operation kept in the journal.
type opKind string

const (
	opCreate  opKind = "create" // a regular file, born in the staging directory
	opMknod   opKind = "mknod"
	opMkdir   opKind = "mkdir"
	opSymlink opKind = "symlink"
	opLink    opKind = "link"
	opUnlink  opKind = "unlink"
	opRmdir   opKind = "rmdir"
	opRename  opKind = "rename"
)

// op is one namespace operation as it happened in the view. Paths are
// relative to the mount and were valid when the operation ran. Because the
// journal is applied to the backing directory strictly in order, the
// backing namespace before op k equals the view's namespace before op k,
// so the recorded paths are valid again when op k is applied: that is the
// whole argument for why replaying a prefix is always correct.
type op struct {
	kind   opKind
	path   string
	path2  string // rename/link destination
	stage  string // create: the staging name holding the inode
	target string // symlink target
	mode   uint32
	dev    uint32
	flags  uint32    // rename flags
	dirs   [2]uint64 // inode numbers of the view directories it changed (0: none)
	owner  *owner    // mkdir, mknod, symlink: who made it (a create's staging file has its owner already)
}

// owner is the caller that made a new name, as the loopback preserves it
// when we are root.
type owner struct{ uid, gid int }

func (o op) touches(dir uint64) bool {
	return dir != 0 && (o.dirs[0] == dir || o.dirs[1] == dir)
}

// apply performs o on the backing directory and returns the backing
// directories whose entries changed, to be synced.
func (o op) apply(backing, staging string) ([]string, error) {
	p := filepath.Join(backing, o.path)
	dirs := []string{filepath.Dir(p)}
	var err error
	switch o.kind {
	case opCreate:
		err = unix.Rename(filepath.Join(staging, o.stage), p)
	case opMknod:
		err = unix.Mknod(p, o.mode, int(o.dev))
	case opMkdir:
		err = unix.Mkdir(p, o.mode)
	case opSymlink:
		err = unix.Symlink(o.target, p)
	case opLink, opRename:
		p2 := filepath.Join(backing, o.path2)
		dirs = append(dirs, filepath.Dir(p2))
		if o.kind == opLink {
			err = unix.Link(p, p2)
		} else {
			err = unix.Renameat2(unix.AT_FDCWD, p, unix.AT_FDCWD, p2, uint(o.flags))
		}
	case opUnlink:
		err = unix.Unlink(p)
	case opRmdir:
		err = unix.Rmdir(p)
	default:
		err = fmt.Errorf("unknown operation %q", o.kind)
	}
	if err == nil && o.owner != nil {
		err = unix.Lchown(p, o.owner.uid, o.owner.gid)
	}
	if err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", o.kind, o.path, err)
	}
	return dirs, nil
}

// applyOps replays ops on the backing directory in order, then syncs every
// backing directory they changed, so the prefix is durable on the real disk
// before the caller drops it from the journal. It returns how many ops were
// applied, also on error, so that none is ever replayed twice.
func applyOps(ops []op, backing, staging string) (int, error) {
	seen := map[string]bool{}
	var dirs []string
	for i, o := range ops {
		ds, err := o.apply(backing, staging)
		if err != nil {
			return i, err
		}
		for _, d := range ds {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			return len(ops), err
		}
	}
	return len(ops), nil
}

func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// lastTouching returns the index of the last op that changed dir, or -1.
func lastTouching(ops []op, dir uint64) int {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].touches(dir) {
			return i
		}
	}
	return -1
}
