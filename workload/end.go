package workload

import (
	"errors"
	"fmt"
)

// How a phase ends early for a whole run, with results. sysbench on one
// host that hits its forced shutdown still prints the whole run's
// statistics; across workers the same end needs every worker's totals, so
// the worker that hits it does not get the others cancelled (their
// reports dropped) but stopped in order.
var (
	// ErrEndsPhase marks a workload's error that ends the phase for
	// every worker of the run (an error for which errors.Is(err,
	// ErrEndsPhase)). The worker says so in PhaseDone; the coordinator
	// then stops the other workers rather than cancelling them.
	ErrEndsPhase = errors.New("ends the phase for every worker")
	// ErrStopped is the cause of a phase's context when another worker's
	// ErrEndsPhase ended the phase (context.Cause(ctx) wraps it, with
	// the coordinator's reason). A workload that knows it ends as at its
	// own end and returns nil: the worker then sends its last interval
	// and its summary, the phase done here in order. A workload that
	// returns an error instead is reported cancelled, as it would be
	// without.
	ErrStopped = errors.New("stopped: another worker ended the phase")
)

// EndsPhase returns an error with text msg that is ErrEndsPhase (and is
// itself a sentinel: compare with errors.Is).
func EndsPhase(msg string) error { return &phaseEnd{msg: msg} }

type phaseEnd struct{ msg string }

func (e *phaseEnd) Error() string        { return e.msg }
func (e *phaseEnd) Is(target error) bool { return target == ErrEndsPhase }

// Stopped is the context cause the worker cancels a phase with when the
// coordinator stops it: ErrStopped, with why.
func Stopped(reason string) error { return fmt.Errorf("%w: %s", ErrStopped, reason) }
