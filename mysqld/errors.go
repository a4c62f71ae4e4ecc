package mysqld

import "errors"

// Sentinel errors, tested with errors.Is.
var (
	// ErrNotRunning reports an operation that needs a running server.
	ErrNotRunning = errors.New("mysqld is not running")
	// ErrRunning reports an operation that needs a stopped server.
	ErrRunning = errors.New("mysqld is running")
	// ErrNotInitialized reports a directory without a data directory.
	ErrNotInitialized = errors.New("mysqld data directory is not initialized (run init first)")
	// ErrStartTimeout reports a server that did not answer in time.
	ErrStartTimeout = errors.New("mysqld did not become ready in time")
	// ErrExited reports a server process that ended while starting.
	ErrExited = errors.New("mysqld exited")
	// ErrUnknownFlavor reports a binary whose --version output is not
	// MySQL's or MariaDB's.
	ErrUnknownFlavor = errors.New("unknown mysqld flavor")
)
