package fio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel AIO ABI (linux/aio_abi.h), called without cgo. The structures are
// laid out as on little-endian 64-bit Linux, where aio_key precedes
// aio_rw_flags.
const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
)

// iocb is struct iocb (64 bytes).
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   uint32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

// ioEvent is struct io_event (32 bytes).
type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

var _ [64]byte = [unsafe.Sizeof(iocb{})]byte{}
var _ [32]byte = [unsafe.Sizeof(ioEvent{})]byte{}

// aioSetup creates a kernel AIO context able to hold depth requests.
func aioSetup(depth int) (uintptr, error) {
	var ctx uintptr
	_, _, errno := unix.Syscall(unix.SYS_IO_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&ctx)), 0)
	if errno != 0 {
		return 0, fmt.Errorf("io_setup(%d): %w (check /proc/sys/fs/aio-max-nr)", depth, errno)
	}
	return ctx, nil
}

// aioDestroy releases the context, cancelling whatever is still queued.
func aioDestroy(ctx uintptr) {
	_, _, _ = unix.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0)
}

// aioSubmit queues the requests pointed to by list and returns how many
// the kernel accepted. It does not allocate.
func aioSubmit(ctx uintptr, list []*iocb) (int, unix.Errno) {
	if len(list) == 0 {
		return 0, 0
	}
	n, _, errno := unix.Syscall(unix.SYS_IO_SUBMIT, ctx, uintptr(len(list)), uintptr(unsafe.Pointer(&list[0])))
	return int(n), errno
}

// aioGetEvents waits for at least min completions (or the timeout) and
// stores up to len(ev) of them.
func aioGetEvents(ctx uintptr, min int, ev []ioEvent, ts *unix.Timespec) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_GETEVENTS, ctx, uintptr(min), uintptr(len(ev)),
		uintptr(unsafe.Pointer(&ev[0])), uintptr(unsafe.Pointer(ts)), 0)
	return int(n), errno
}
