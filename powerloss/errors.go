package powerloss

import "errors"

var (
	// ErrBadLayout means the backing, work and mount directories overlap
	// or the work directory cannot be used.
	ErrBadLayout = errors.New("bad powerloss layout")
	// ErrServerGone means the serving process exited or stopped answering.
	ErrServerGone = errors.New("powerloss server gone")
	// ErrCut means the power was already cut on this mount.
	ErrCut = errors.New("power already cut")
)
