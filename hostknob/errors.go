package hostknob

import "errors"

var (
	// ErrUnknown: the setting names no knob this package knows.
	ErrUnknown = errors.New("unknown host knob")
	// ErrNotAllowed: the worker's operator did not allow the knob.
	ErrNotAllowed = errors.New("not allowed by this worker's operator")
	// ErrBadValue: the value is not one the kernel accepts for the knob.
	ErrBadValue = errors.New("bad value")
	// ErrUnavailable: the kernel or the device does not offer the knob
	// (no block device behind the directory, no such attribute).
	ErrUnavailable = errors.New("not available here")
	// ErrRefused: the kernel refused a write.
	ErrRefused = errors.New("refused by the kernel")
	// ErrBusy: another run (or another process) holds the setting.
	ErrBusy = errors.New("held by another run")
	// ErrJournal: the restore journal is unreadable or in use.
	ErrJournal = errors.New("restore journal")
)

// lineError is several errors on one line ("a; b"), each still matched by
// errors.Is: refusals travel as one line to the user.
type lineError []error

func (e lineError) Error() string {
	s := ""
	for i, err := range e {
		if i > 0 {
			s += "; "
		}
		s += err.Error()
	}
	return s
}

func (e lineError) Unwrap() []error { return e }

// joinLine returns nil, the one error, or a lineError.
func joinLine(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return lineError(errs)
}
