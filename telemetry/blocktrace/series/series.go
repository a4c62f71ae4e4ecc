// Package series names the kernel-evidence histograms that package
// blocktrace adds to a worker's intervals, and reads those names back. The
// series travel as extra ops of an interval (Interval.ops) and merge exactly
// like workload ops; readers (summaries, hgrm, reports, campaign tables)
// tell them from workload ops, and their units, by name alone, without
// importing the tracer (and its eBPF library).
//
// Names, one lowercase dot-separated path each:
//
//	block.<dev>.<op>.d2c     device latency, issue -> complete, ns
//	block.<dev>.<op>.q2d     queue time, insert -> issue, ns (requests a scheduler queued)
//	block.<dev>.<op>.bytes   request size, bytes
//	redo.<op>.bytes          block requests on the redo log's extents (op read or write), bytes
//	sys.write.bytes          bytes per write-family syscall of the processes of interest
//	sys.fsync, sys.fdatasync syscall enter -> exit of the processes of interest, ns
//
// <dev> is the kernel's disk name (vda, nvme0n1, loop3); <op> is one of
// read, write, flush, discard, other.
package series

import (
	"strings"
)

// Families, as `run --show` names them.
const (
	FamilyBlock    = "block"    // block.* and redo.*
	FamilySyscalls = "syscalls" // sys.*
)

// Metrics of block series.
const (
	D2C   = "d2c"
	Q2D   = "q2d"
	Bytes = "bytes"
)

// Ops of block series, in display order.
var Ops = []string{"read", "write", "flush", "discard", "other"}

// Series is a parsed series name.
type Series struct {
	Name   string
	Family string // FamilyBlock or FamilySyscalls
	Prefix string // "block", "redo" or "sys"
	Device string // block series only
	Op     string // read, write, ... for block and redo; write, fsync, fdatasync for sys
	Metric string // d2c, q2d, bytes; "" for sys.fsync and sys.fdatasync
}

// Bytes reports whether the series' values are bytes (else nanoseconds).
func (s Series) Bytes() bool { return s.Metric == Bytes }

// Block names a block-layer series.
func Block(dev, op, metric string) string { return "block." + dev + "." + op + "." + metric }

// Redo names the series of requests on the redo log's extents.
func Redo(op string) string { return "redo." + op + ".bytes" }

// Sys series names.
const (
	SysWriteBytes = "sys.write.bytes"
	SysFsync      = "sys.fsync"
	SysFdatasync  = "sys.fdatasync"
)

// Is reports whether op names a kernel-evidence series rather than a
// workload operation.
func Is(op string) bool {
	_, ok := Parse(op)
	return ok
}

// Parse reads a series name; ok is false for anything else (a workload op).
func Parse(name string) (s Series, ok bool) {
	f := strings.Split(name, ".")
	s.Name = name
	switch {
	case len(f) == 4 && f[0] == "block" && f[1] != "" && validOp(f[2]) && (f[3] == D2C || f[3] == Q2D || f[3] == Bytes):
		s.Family, s.Prefix, s.Device, s.Op, s.Metric = FamilyBlock, f[0], f[1], f[2], f[3]
	case len(f) == 3 && f[0] == "redo" && (f[1] == "read" || f[1] == "write") && f[2] == Bytes:
		s.Family, s.Prefix, s.Op, s.Metric = FamilyBlock, f[0], f[1], f[2]
	case name == SysWriteBytes:
		s.Family, s.Prefix, s.Op, s.Metric = FamilySyscalls, "sys", "write", Bytes
	case name == SysFsync || name == SysFdatasync:
		s.Family, s.Prefix, s.Op = FamilySyscalls, "sys", f[1]
	default:
		return Series{}, false
	}
	return s, true
}

func validOp(op string) bool {
	for _, o := range Ops {
		if o == op {
			return true
		}
	}
	return false
}
