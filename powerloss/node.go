package powerloss

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a loopback node over the view directory whose data goes through
// the layer's overlays and whose namespace changes are journaled. Lookup,
// readdir, xattrs and the like are the loopback's own.
type node struct {
	*fs.LoopbackNode
	l *Layer
}

var (
	_ fs.NodeWrapChilder = (*node)(nil)
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeCreater     = (*node)(nil)
	_ fs.NodeFsyncer     = (*node)(nil)
	_ fs.NodeGetattrer   = (*node)(nil)
	_ fs.NodeSetattrer   = (*node)(nil)
	_ fs.NodeRenamer     = (*node)(nil)
)

// WrapChild makes every node the loopback creates one of ours.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), l: n.l}
}

func (n *node) rel() string { return n.Path(n.Root()) }

func (n *node) ino() uint64 { return n.StableAttr().Ino }

// Open hands out a handle on the inode's shared state. O_DIRECT needs no
// care: the layer never opens the backing file with it.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	f, err := n.l.acquire(n.ino(), n.rel())
	if err != nil {
		return nil, 0, toErrno(err)
	}
	h := &handle{f: f, l: n.l, sync: flags&unix.O_DSYNC != 0}
	if flags&unix.O_TRUNC != 0 && flags&unix.O_ACCMODE != unix.O_RDONLY {
		n.l.touch(f)
		if err := f.truncate(0, h.sync); err != nil {
			h.Release(ctx)
			return nil, 0, toErrno(err)
		}
	}
	return h, 0, 0
}

// Create makes the inode in the staging directory and links it into the
// view: it has no durable name until a directory fsync commits the op.
func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	l := n.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isCut.Load() {
		return nil, nil, 0, syscall.EIO
	}
	rel := filepath.Join(n.rel(), name)
	fd, st, errno := n.stageLocked(ctx, rel, mode)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	f, err := l.adoptLocked(st.Ino, rel, fd)
	if err != nil {
		unix.Close(fd)
		return nil, nil, 0, toErrno(err)
	}
	out.Attr.FromStat(st)
	ch := n.NewInode(ctx, &fs.LoopbackNode{RootData: n.RootData}, stableAttr(fd, st))
	return ch, &handle{f: f, l: l, sync: flags&unix.O_DSYNC != 0}, 0, 0
}

// stageLocked creates a regular file as staging/<n>, links it at rel in
// the view and journals the create. It returns an open read-write fd.
func (n *node) stageLocked(ctx context.Context, rel string, mode uint32) (int, *syscall.Stat_t, syscall.Errno) {
	l := n.l
	stage := l.nextStageLocked()
	sp := filepath.Join(l.staging, stage)
	fd, err := unix.Open(sp, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, mode&07777)
	if err != nil {
		return -1, nil, toErrno(err)
	}
	chownCaller(ctx, fd)
	fail := func(err error) (int, *syscall.Stat_t, syscall.Errno) {
		unix.Close(fd)
		unix.Unlink(sp)
		return -1, nil, toErrno(err)
	}
	if err := unix.Link(sp, filepath.Join(l.view, rel)); err != nil {
		return fail(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fail(err)
	}
	l.recordLocked(op{kind: opCreate, path: rel, stage: stage, dirs: [2]uint64{n.ino()}})
	return fd, &st, 0
}

// chownCaller gives a new file to the process that created it, as the
// loopback does, when we are root.
func chownCaller(ctx context.Context, fd int) {
	if o := callerOf(ctx); o != nil {
		unix.Fchown(fd, o.uid, o.gid)
	}
}

// callerOf returns who made a request, if we are root and may give them
// what they create.
func callerOf(ctx context.Context) *owner {
	if caller, ok := fuse.FromContext(ctx); ok && unix.Getuid() == 0 {
		return &owner{uid: int(caller.Uid), gid: int(caller.Gid)}
	}
	return nil
}

// stableAttr mirrors the loopback's inode identity (one device: the inode
// number itself; generation from the birth time) so that a later Lookup of
// the same file finds the same node.
func stableAttr(fd int, st *syscall.Stat_t) fs.StableAttr {
	gen := uint64(1)
	var x unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &x) == nil && x.Mask&unix.STATX_BTIME != 0 {
		if b := uint64(x.Btime.Sec)*1e9 + uint64(x.Btime.Nsec); b != 0 {
			gen = b
		}
	}
	return fs.StableAttr{Mode: st.Mode, Ino: st.Ino, Gen: gen}
}

// Fsync on a file makes its data and size durable; on a directory it
// commits the namespace journal up to the directory's last change.
func (n *node) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if n.IsDir() {
		return toErrno(n.l.syncDir(n.ino()))
	}
	n.l.fsyncs.Add(1)
	if n.l.isCut.Load() {
		return syscall.EIO
	}
	f := n.l.lookup(n.ino())
	if f == nil {
		return 0 // nothing of it was ever cached: the backing file is durable
	}
	return toErrno(f.fsync())
}

// OpendirHandle wraps the loopback's directory stream so that fsyncdir on
// it reaches the journal rather than the view directory.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, errno := fs.NewLoopbackDirStream(filepath.Join(n.l.view, n.rel()))
	if errno != 0 {
		return nil, 0, errno
	}
	return &dirHandle{ds: ds.(loopbackDir), n: n}, 0, 0
}

type loopbackDir interface {
	fs.DirStream
	fs.FileReaddirenter
	fs.FileSeekdirer
	fs.FileReleasedirer
}

type dirHandle struct {
	ds loopbackDir
	n  *node
}

var _ fs.FileFsyncdirer = (*dirHandle)(nil)

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.ds.Readdirent(ctx)
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.ds.Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) { d.ds.Releasedir(ctx, flags) }

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	return toErrno(d.n.l.syncDir(d.n.ino()))
}

// Tmpfile is refused: an O_TMPFILE inode has no path to journal. Callers
// (MariaDB's mysys among them) fall back to create + unlink.
func (n *node) Tmpfile(ctx context.Context, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// CopyFileRange is refused so the kernel falls back to read and write,
// which go through the overlay.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut, length, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}
