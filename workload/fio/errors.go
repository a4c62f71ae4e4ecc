package fio

import "errors"

// Sentinel errors; test with errors.Is.
var (
	// ErrUnknownOption is an option outside the supported set.
	ErrUnknownOption = errors.New("unknown option")
	// ErrUnsupported is a fio option or flag that cannot apply here; the
	// message says why.
	ErrUnsupported = errors.New("not supported")
	// ErrInvalidValue is a value fio would reject.
	ErrInvalidValue = errors.New("invalid value")
	// ErrAlignment is a block size or offset that O_DIRECT cannot use.
	ErrAlignment = errors.New("not aligned for direct I/O")
	// ErrDirectUnsupported is a filesystem that refuses O_DIRECT (tmpfs).
	ErrDirectUnsupported = errors.New("filesystem does not support O_DIRECT")
)
