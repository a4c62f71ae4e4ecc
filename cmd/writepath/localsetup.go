package main

import (
	"context"
	"io"
)

// localSetup prepares what a kind needs in local mode (no --coordinator)
// before its spec is built, e.g. a sandbox mysqld for oltp when no --mysql-*
// flag is given. It returns the (possibly extended) kind arguments and a
// cleanup that must run however the run ends.
type localSetup func(ctx context.Context, args []string, out io.Writer) (newArgs []string, cleanup func(), err error)

// localSetupFor returns the local-mode setup of a kind, or nil.
func localSetupFor(kind string) localSetup {
	switch kind {
	case "oltp":
		return oltpSandbox
	}
	return nil
}
