package powerloss

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// handle is one open of a file. It deliberately does not implement
// fs.FilePassthroughFder: kernel passthrough would bypass the overlay.
type handle struct {
	f    *file
	l    *Layer
	sync bool // opened O_SYNC or O_DSYNC: every write is durable on return
}

var (
	_ fs.FileReader    = (*handle)(nil)
	_ fs.FileWriter    = (*handle)(nil)
	_ fs.FileReleaser  = (*handle)(nil)
	_ fs.FileGetattrer = (*handle)(nil)
	_ fs.FileAllocater = (*handle)(nil)
	_ fs.FileFlusher   = (*handle)(nil)
)

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h.l.isCut.Load() {
		return nil, syscall.EIO
	}
	n, err := h.f.read(dest, off)
	if err != nil {
		return nil, toErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

// Write caches data in the overlay. The kernel hands over the buffer for
// this call only, and the overlay copies it.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if h.l.isCut.Load() {
		return 0, syscall.EIO
	}
	h.l.writes.Add(1)
	h.l.writtenBytes.Add(int64(len(data)))
	if h.sync {
		h.l.syncWrites.Add(1)
	}
	h.l.touch(h.f)
	if err := h.f.write(data, off, h.sync); err != nil {
		return 0, toErrno(err)
	}
	return uint32(len(data)), 0
}

// Flush (close(2)) makes nothing durable, as on a real file system.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.l.release(h.f)
	return 0
}

func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	if h.l.isCut.Load() {
		return syscall.EIO
	}
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	if h.f.mu.fd < 0 {
		return syscall.EIO
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(h.f.mu.fd, &st); err != nil {
		return toErrno(err)
	}
	out.FromStat(&st)
	out.Size = uint64(h.f.mu.ov.size)
	return 0
}

func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if h.l.isCut.Load() {
		return syscall.EIO
	}
	h.l.touch(h.f)
	if err := h.f.allocate(int64(off), int64(size), mode); err != nil {
		return toErrno(err)
	}
	if h.sync {
		return toErrno(h.f.fsync())
	}
	return 0
}
