package guard

import "errors"

// Sentinel errors, tested with errors.Is.
var (
	// ErrOutside is wrapped by refusals of paths outside the allowed roots.
	ErrOutside = errors.New("outside the worker's allowed paths")
	// ErrBinary is wrapped by refusals of binaries not on the allow-list.
	ErrBinary = errors.New("binary not on the worker's allow-list")
	// ErrNoSpace is wrapped when a job needs more space than is free.
	ErrNoSpace = errors.New("not enough free space")
	// ErrMemory is wrapped when a job needs more buffers than the budget.
	ErrMemory = errors.New("over the worker's memory budget")
	// ErrNotAllowed is wrapped by refusals of settings, privileged actions
	// and endpoints the operator did not allow.
	ErrNotAllowed = errors.New("not allowed by this worker")
)
