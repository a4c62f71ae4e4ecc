package powerloss

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The namespace operations below run the loopback's own operation on the
// view and, under the layer lock, append the op to the journal, so the
// journal's order is the view's order.

// nsLocked runs do under the layer lock unless the power is cut, and
// journals o when do succeeds.
func (n *node) ns(o op, do func() syscall.Errno) syscall.Errno {
	l := n.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isCut.Load() {
		return syscall.EIO
	}
	if errno := do(); errno != 0 {
		return errno
	}
	l.recordLocked(o)
	return 0
}

func (n *node) child(name string) string { return filepath.Join(n.rel(), name) }

func (n *node) here() [2]uint64 { return [2]uint64{n.ino()} }

// Mkdir makes a directory in the view; its durable twin appears in the
// backing directory when the parent's change is committed.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	o := op{kind: opMkdir, path: n.child(name), mode: mode & 07777, dirs: n.here(), owner: callerOf(ctx)}
	errno = n.ns(o, func() syscall.Errno {
		ch, errno = n.LoopbackNode.Mkdir(ctx, name, mode, out)
		return errno
	})
	return ch, errno
}

// Mknod makes a special file; a regular one is created like Create, in
// staging, so that its data reaches the inode that will be durable.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if mode&unix.S_IFMT == unix.S_IFREG || mode&unix.S_IFMT == 0 {
		return n.mknodRegular(ctx, name, mode, out)
	}
	var ch *fs.Inode
	o := op{kind: opMknod, path: n.child(name), mode: mode, dev: rdev, dirs: n.here(), owner: callerOf(ctx)}
	errno := n.ns(o, func() (errno syscall.Errno) {
		ch, errno = n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
		return errno
	})
	return ch, errno
}

func (n *node) mknodRegular(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	l := n.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isCut.Load() {
		return nil, syscall.EIO
	}
	fd, st, errno := n.stageLocked(ctx, n.child(name), mode)
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(fd)
	out.Attr.FromStat(st)
	return n.NewInode(ctx, &fs.LoopbackNode{RootData: n.RootData}, stableAttr(fd, st)), 0
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	o := op{kind: opSymlink, path: n.child(name), target: target, dirs: n.here(), owner: callerOf(ctx)}
	errno = n.ns(o, func() syscall.Errno {
		ch, errno = n.LoopbackNode.Symlink(ctx, target, name, out)
		return errno
	})
	return ch, errno
}

// Link adds a name to an existing inode. The source path was valid when
// the link was made, so it is valid when the op is replayed in order.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	src, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	o := op{kind: opLink, path: src.rel(), path2: n.child(name), dirs: n.here()}
	errno = n.ns(o, func() syscall.Errno {
		ch, errno = n.LoopbackNode.Link(ctx, src.LoopbackNode, name, out)
		return errno
	})
	return ch, errno
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	o := op{kind: opUnlink, path: n.child(name), dirs: n.here()}
	return n.ns(o, func() syscall.Errno { return n.LoopbackNode.Unlink(ctx, name) })
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	o := op{kind: opRmdir, path: n.child(name), dirs: n.here()}
	return n.ns(o, func() syscall.Errno { return n.LoopbackNode.Rmdir(ctx, name) })
}

// Rename touches both directories: a directory fsync of either commits it.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if flags&unix.RENAME_WHITEOUT != 0 {
		return syscall.EINVAL
	}
	o := op{kind: opRename, path: n.child(name), path2: np.child(newName), flags: flags,
		dirs: [2]uint64{n.ino(), np.ino()}}
	return n.ns(o, func() syscall.Errno {
		return n.LoopbackNode.Rename(ctx, name, np.LoopbackNode, newName, flags)
	})
}
