package worker

import "errors"

var (
	// ErrUnknownKind: the spec's kind is not linked into this worker.
	ErrUnknownKind = errors.New("kind not linked into this worker")
	// ErrNoWelcome: the coordinator did not acknowledge the Hello.
	ErrNoWelcome = errors.New("coordinator did not welcome the worker")
	// ErrSilent: the coordinator went silent past the heartbeat timeout.
	ErrSilent = errors.New("coordinator silent")
	// ErrNoDisks: the run has a disk profile and this worker's operator
	// did not opt in (worker --allow-disk).
	ErrNoDisks = errors.New("this worker applies no disk profiles (its operator did not pass --allow-disk)")
)
