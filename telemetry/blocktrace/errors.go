package blocktrace

import "errors"

// ErrUnavailable reports that this kernel or process cannot run the
// tracing programs; the error it wraps says why.
var ErrUnavailable = errors.New("block tracing unavailable")

// ErrBusy reports that the programs are already attached for another
// phase: in-process workers on one host trace it once, so a merged
// interval never counts a host's requests twice.
var ErrBusy = errors.New("block tracing already attached for another phase on this host")
