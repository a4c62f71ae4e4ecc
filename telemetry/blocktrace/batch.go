package blocktrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reading the histogram map is the tracer's one cost in user space, once
// per interval: a busy phase holds thousands of (series, bucket) keys, each
// with a count per CPU. cilium/ebpf's BatchLookup unmarshals per-CPU values
// through reflection, one element at a time (~50 ms a Tick on a loaded
// 2-CPU machine), so the batch is read here with the raw command into
// reused buffers: keys as packed uint64s, values as flat uint64s.

const bpfMapLookupBatch = 24 // BPF_MAP_LOOKUP_BATCH

// batchAttr is the kernel's union bpf_attr for the batch commands.
type batchAttr struct {
	inBatch, outBatch uint64
	keys, values      uint64
	count, mapFd      uint32
	elemFlags, flags  uint64
}

// batchReader reads a per-CPU hash of 8-byte keys and u64 values.
type batchReader struct {
	fd     int
	cpus   int
	keys   []byte
	values []uint64
	cursor [2]uint64 // in and out batch tokens (the hash's bucket index)
}

func newBatchReader(fd, cpus, batch int) *batchReader {
	return &batchReader{fd: fd, cpus: cpus, keys: make([]byte, 8*batch), values: make([]uint64, batch*cpus)}
}

// each calls f with every key (little-endian as the programs store it)
// and its per-CPU counts (valid during the call only).
func (r *batchReader) each(f func(key uint64, percpu []uint64)) error {
	batch := len(r.keys) / 8
	first := true
	for {
		a := batchAttr{keys: uint64(uintptr(unsafe.Pointer(&r.keys[0]))),
			values: uint64(uintptr(unsafe.Pointer(&r.values[0]))), count: uint32(batch), mapFd: uint32(r.fd),
			outBatch: uint64(uintptr(unsafe.Pointer(&r.cursor[1])))}
		if !first {
			r.cursor[0] = r.cursor[1]
			a.inBatch = uint64(uintptr(unsafe.Pointer(&r.cursor[0])))
		}
		first = false
		_, _, errno := unix.Syscall(unix.SYS_BPF, bpfMapLookupBatch, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a))
		for i := range int(a.count) {
			f(binary.LittleEndian.Uint64(r.keys[8*i:]), r.values[i*r.cpus:(i+1)*r.cpus])
		}
		switch {
		case errno == 0:
		case errors.Is(errno, unix.ENOENT):
			return nil
		default:
			return fmt.Errorf("block tracing: read histograms: %w", errno)
		}
	}
}
