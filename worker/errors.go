package worker

import "errors"

var (
	// ErrUnknownKind: the spec's kind is not linked into this worker.
	ErrUnknownKind = errors.New("kind not linked into this worker")
	// ErrNoWelcome: the coordinator did not acknowledge the Hello.
	ErrNoWelcome = errors.New("coordinator did not welcome the worker")
	// ErrSilent: the coordinator went silent past the heartbeat timeout.
	ErrSilent = errors.New("coordinator silent")
)
