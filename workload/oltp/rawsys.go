package oltp

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A client's reads and writes are raw system calls, made without telling
// the scheduler: the goroutine keeps its P (it has one to itself, see
// tuneRuntime). Through unix.Read and unix.Write every call marks the P as
// in a system call, and the runtime's sysmon, seeing goroutines that run
// for long and keep entering system calls, retakes Ps and wakes itself
// every 20 µs (measured with an event loop at 64 connections: 28,000
// nanosleeps and 1,100 futex calls in 6 s, more kernel time than the
// statements' own reads and writes).

// rawPoll is ppoll(2) on fds with a timeout and no signal mask: the
// number of ready descriptors (0 when the timeout passed).
func rawPoll(fds *[1]unix.PollFd, timeout time.Duration) (int, error) {
	ts := unix.NsecToTimespec(int64(timeout)) // the kernel writes the time left here
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawRead is read(2); p must not be empty.
func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawWrite is write(2); p must not be empty.
func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
