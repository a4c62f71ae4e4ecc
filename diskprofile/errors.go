package diskprofile

import "errors"

var (
	// ErrNotAllowed: the worker's operator did not opt in to this target
	// (worker --allow-disk).
	ErrNotAllowed = errors.New("not allowed by this worker's operator")
	// ErrNoThrottling: the kernel offers no block throttling this package
	// can use here.
	ErrNoThrottling = errors.New("no block throttling")
	// ErrUnavailable: something the profile needs is missing (a device,
	// dm-delay, mkfs).
	ErrUnavailable = errors.New("not available here")
	// ErrBusy: another run, or another process, holds the target.
	ErrBusy = errors.New("in use")
)
