package blocktrace

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reading the programs' counts is the tracer's one cost in user space, once
// per interval. cilium/ebpf's batch calls unmarshal per-CPU values through
// reflection, one element at a time (~50 ms a Tick on a loaded 2-CPU
// machine, when the counts were a hash of thousands of keys), so the
// per-CPU arrays are read and cleared here with the raw batch commands
// into reused buffers: keys as uint32s, each element's values as the
// kernel lays them out (one per possible CPU, each rounded up to 8 bytes).

const (
	bpfMapLookupBatch = 24 // BPF_MAP_LOOKUP_BATCH
	bpfMapUpdateBatch = 26 // BPF_MAP_UPDATE_BATCH
)

// batchAttr is the kernel's union bpf_attr for the batch commands.
type batchAttr struct {
	inBatch, outBatch uint64
	keys, values      uint64
	count, mapFd      uint32
	elemFlags, flags  uint64
}

// arrayBatch reads and writes elements [0, n) of one per-CPU array map.
type arrayBatch struct {
	fd     int
	stride int // bytes of one element: its per-CPU values
	keys   []uint32
	values []byte
	cursor uint32 // the out batch token (the last index read)
}

// newArrayBatch is a batch for a per-CPU array of valueSize-byte values.
func newArrayBatch(fd, valueSize, cpus int) *arrayBatch {
	return &arrayBatch{fd: fd, stride: ((valueSize + 7) &^ 7) * cpus}
}

func (b *arrayBatch) grow(n int) {
	for len(b.keys) < n {
		b.keys = append(b.keys, uint32(len(b.keys)))
	}
	// The pages in use grow a few at a time over a run: doubling keeps
	// the reallocations to a handful (an exact size each time was 6 MB of
	// garbage in 10 s at 64 oltp threads, the load's largest source).
	if need := n * b.stride; len(b.values) < need {
		b.values = make([]byte, max(need, 2*len(b.values)))
	}
}

// read fills values with elements [0, n) and returns them (valid until the
// next call): element i's CPU c value at i*stride + c*stride/cpus.
func (b *arrayBatch) read(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	b.grow(n)
	a := batchAttr{keys: uint64(uintptr(unsafe.Pointer(&b.keys[0]))),
		values: uint64(uintptr(unsafe.Pointer(&b.values[0]))), count: uint32(n), mapFd: uint32(b.fd),
		outBatch: uint64(uintptr(unsafe.Pointer(&b.cursor)))}
	_, _, errno := unix.Syscall(unix.SYS_BPF, bpfMapLookupBatch, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a))
	// ENOENT: the array ended before n elements (n was its size).
	if errno != 0 && !errors.Is(errno, unix.ENOENT) {
		return nil, fmt.Errorf("block tracing: read counts: %w", errno)
	}
	// The command rewrote keys with the indexes it read, from 0 up.
	for i := range b.keys[:n] {
		b.keys[i] = uint32(i)
	}
	return b.values[:int(a.count)*b.stride], nil
}

// zero sets elements [0, n) to zero on every CPU.
func (b *arrayBatch) zero(n int) error {
	if n <= 0 {
		return nil
	}
	b.grow(n)
	clear(b.values[:n*b.stride])
	a := batchAttr{keys: uint64(uintptr(unsafe.Pointer(&b.keys[0]))),
		values: uint64(uintptr(unsafe.Pointer(&b.values[0]))), count: uint32(n), mapFd: uint32(b.fd)}
	if _, _, errno := unix.Syscall(unix.SYS_BPF, bpfMapUpdateBatch, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a)); errno != 0 {
		return fmt.Errorf("block tracing: clear counts: %w", errno)
	}
	return nil
}
