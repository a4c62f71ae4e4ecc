package powerloss

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The loopback reads attributes from the view, where a file's size is its
// durable size; these overrides report the cached (logical) size instead.

// logicalSize returns the cached size of inode ino if the layer holds it.
func (l *Layer) logicalSize(ino uint64) (uint64, bool) {
	f := l.lookup(ino)
	if f == nil {
		return 0, false
	}
	return uint64(f.size()), true
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.l.isCut.Load() {
		return nil, syscall.EIO
	}
	ch, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == 0 {
		if sz, ok := n.l.logicalSize(ch.StableAttr().Ino); ok {
			out.Attr.Size = sz
		}
	}
	return ch, errno
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*handle); ok { // fstat: works for an unlinked open file too
		return h.Getattr(ctx, out)
	}
	if n.l.isCut.Load() {
		return syscall.EIO
	}
	if errno := n.LoopbackNode.Getattr(ctx, nil, out); errno != 0 {
		return errno
	}
	if sz, ok := n.l.logicalSize(n.ino()); ok {
		out.Size = sz
	}
	return 0
}

func (n *node) Statx(ctx context.Context, fh fs.FileHandle, flags, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if n.l.isCut.Load() {
		return syscall.EIO
	}
	if errno := n.LoopbackNode.Statx(ctx, nil, flags, mask, out); errno != 0 {
		return errno
	}
	if sz, ok := n.l.logicalSize(n.ino()); ok {
		out.Size = sz
	}
	return 0
}

// Setattr sends a size change to the overlay (durable at the next fsync,
// or at once through an O_SYNC handle) and everything else (mode, owner,
// times) to the loopback, i.e. straight to the inode: see doc.go, limits.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if n.l.isCut.Load() {
		return syscall.EIO
	}
	if sz, ok := in.GetSize(); ok {
		if errno := n.truncate(fh, int64(sz)); errno != 0 {
			return errno
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	if errno := n.LoopbackNode.Setattr(ctx, nil, in, out); errno != 0 {
		return errno
	}
	return n.Getattr(ctx, fh, out)
}

func (n *node) truncate(fh fs.FileHandle, size int64) syscall.Errno {
	if h, ok := fh.(*handle); ok {
		n.l.touch(h.f)
		return toErrno(h.f.truncate(size, h.sync))
	}
	f, err := n.l.acquire(n.ino(), n.rel())
	if err != nil {
		return toErrno(err)
	}
	defer n.l.release(f)
	n.l.touch(f)
	return toErrno(f.truncate(size, false))
}
