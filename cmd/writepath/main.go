// Command writepath is a distributed load-test fabric for the database write
// path: fio-equivalent direct-IO jobs, sysbench-compatible OLTP write-only
// load and crash-recovery timing, run on many hosts at the same moment with
// exactly merged latency histograms.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/writepath/writepath/internal/preempt"
)

func main() {
	preempt.Off() // the oltp run phase's blocking reads; see the package
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec))
		}
		fmt.Fprintln(os.Stderr, "writepath:", err)
		os.Exit(1)
	}
}

// exitCode ends the process with a status and no further message (the
// command already said what went wrong).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
