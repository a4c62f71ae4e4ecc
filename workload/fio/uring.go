package fio

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI (linux/io_uring.h), called without cgo or liburing.
// Structures are laid out as on 64-bit Linux.
const (
	uringOffSQRing = 0
	uringOffCQRing = 0x8000000
	uringOffSQEs   = 0x10000000

	uringFeatSingleMmap = 1 << 0
	uringEnterGetEvents = 1 << 0

	uringOpFsync = 3
	uringOpRead  = 22 // non-vectored, Linux 5.6+
	uringOpWrite = 23

	uringFsyncDatasync = 1 << 0
)

type uringSQOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type uringCQOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// uringParams is struct io_uring_params (120 bytes).
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  uringSQOffsets
	cqOff                                                                  uringCQOffsets
}

// uringSQE is struct io_uring_sqe (64 bytes): the fields a read, write or
// fsync uses.
type uringSQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32 // rw_flags, fsync_flags
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad         uint64
}

// uringCQE is struct io_uring_cqe (16 bytes).
type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

var _ [120]byte = [unsafe.Sizeof(uringParams{})]byte{}
var _ [64]byte = [unsafe.Sizeof(uringSQE{})]byte{}
var _ [16]byte = [unsafe.Sizeof(uringCQE{})]byte{}

// uring is one submission and completion ring pair, mapped into memory.
// One goroutine (one clone) uses it: the kernel is the only other party,
// through the head and tail words.
type uring struct {
	fd             int
	maps           [][]byte
	sqTail, sqHead *uint32
	sqMask         uint32
	sqArray        []uint32
	sqes           []uringSQE
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []uringCQE
	queued         int // pushed to the SQ ring, not yet consumed by io_uring_enter
}

// newUring sets up a ring of at least entries submission slots.
func newUring(entries int) (*uring, error) {
	var p uringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup(%d): %w (io_uring needs Linux 5.6+ and may be disabled by kernel.io_uring_disabled)", entries, errno)
	}
	r := &uring{fd: int(fd)}
	mmap := func(off int64, size int) ([]byte, error) {
		b, err := unix.Mmap(r.fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("mmap io_uring ring: %w", err)
		}
		r.maps = append(r.maps, b)
		return b, nil
	}
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(uringCQE{}))
	single := p.features&uringFeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	sq, err := mmap(uringOffSQRing, sqSize)
	if err != nil {
		r.close()
		return nil, err
	}
	cq := sq
	if !single {
		if cq, err = mmap(uringOffCQRing, cqSize); err != nil {
			r.close()
			return nil, err
		}
	}
	sqes, err := mmap(uringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{})))
	if err != nil {
		r.close()
		return nil, err
	}
	word := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	r.sqHead, r.sqTail, r.sqMask = word(sq, p.sqOff.head), word(sq, p.sqOff.tail), *word(sq, p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(word(sq, p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = word(cq, p.cqOff.head), word(cq, p.cqOff.tail), *word(cq, p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Pointer(&cq[p.cqOff.cqes])), p.cqEntries)
	return r, nil
}

func (r *uring) close() {
	for _, b := range r.maps {
		_ = unix.Munmap(b)
	}
	r.maps = nil
	if r.fd >= 0 {
		_ = unix.Close(r.fd)
		r.fd = -1
	}
}

// push queues SQE slot i for submission.
func (r *uring) push(i uint32) {
	tail := atomic.LoadUint32(r.sqTail)
	r.sqArray[tail&r.sqMask] = i
	atomic.StoreUint32(r.sqTail, tail+1) // publishes the SQE to the kernel
	r.queued++
}

// enter submits up to toSubmit queued SQEs and, with minComplete > 0,
// waits for that many completions.
func (r *uring) enter(toSubmit, minComplete int) (int, unix.Errno) {
	var flags uintptr
	if minComplete > 0 {
		flags = uringEnterGetEvents
	}
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), flags, 0, 0)
	return int(n), errno
}

// peek returns the oldest completion without consuming it; ok is false
// when there is none.
func (r *uring) peek() (cqe uringCQE, ok bool) {
	head := atomic.LoadUint32(r.cqHead)
	if head == atomic.LoadUint32(r.cqTail) {
		return uringCQE{}, false
	}
	return r.cqes[head&r.cqMask], true
}

// advance consumes the oldest completion.
func (r *uring) advance() {
	atomic.StoreUint32(r.cqHead, atomic.LoadUint32(r.cqHead)+1)
}
