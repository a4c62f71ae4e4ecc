package fio

import (
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// layoutBuffer is the most the layout of one file holds at a time (it
// writes whole bs multiples of about 1 MiB; clones are laid out one by
// one).
const layoutBuffer = 1 << 20

// bufferMemory is what a spec's clones hold in I/O buffers at once: for
// every clone iodepth buffers of bs bytes (one for the synchronous
// engines), page rounded, plus one layout buffer. Saturates instead of
// overflowing.
func bufferMemory(spec *fiov1.Spec) int64 {
	const page = 4096
	var total uint64
	big := uint64(1) << 62
	var maxBs uint64
	for _, j := range spec.GetJobs() {
		depth := uint64(1)
		if j.GetIoengine() == fiov1.IOEngine_IO_ENGINE_LIBAIO || j.GetIoengine() == fiov1.IOEngine_IO_ENGINE_IO_URING {
			depth = uint64(j.GetIodepth())
		}
		bs := (j.GetBs() + page - 1) / page * page
		maxBs = max(maxBs, bs)
		per := satMul(depth, bs)
		total = satAdd(total, satMul(per, uint64(j.GetNumjobs())))
	}
	total = satAdd(total, max(min(maxBs, big), layoutBuffer))
	return int64(min(total, big))
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > (1<<63)/a {
		return 1 << 63
	}
	return a * b
}

func satAdd(a, b uint64) uint64 {
	if a+b < a || a+b > 1<<63 {
		return 1 << 63
	}
	return a + b
}
