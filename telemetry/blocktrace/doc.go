// Package blocktrace owns writepath's eBPF programs and their loader: the
// block layer's device latency (D2C), queue time (Q2D) and request sizes per
// device and op, the write-syscall sizes and fsync/fdatasync latency of the
// processes of interest, and block requests that land on the redo log's
// extents (read-modify-write). It is the only importer of cilium/ebpf.
//
// The programs (bpf/trace.bpf.c, CO-RE against the kernel's BTF) count every
// value at its HDR bucket index, the index package hist gives the value, in
// per-CPU arrays (pages of 256 buckets handed out per series as ranges are
// hit, found through a per-series directory: inlined lookups, no hashing),
// so a Tick rebuilds each series as a hist.Histogram with nothing lost
// beyond HDR's own 3-digit precision, from counts that only grow (no event
// wakes user space; a Tick takes the increase since the previous one).
// Series names are package series'.
//
// Open loads the programs once; a Tracer is attached for one measured phase
// at a time (Start) and detached by its Close. Where BPF cannot run (no
// CAP_BPF, lockdown, no BTF) Open returns an error wrapping ErrUnavailable,
// and the caller runs without it.
package blocktrace
