package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stopGrace is how long a command has, after SIGINT or SIGTERM cancelled
// its context, to return on its own (cancel on the workers, stop its
// servers, write its last record). Past it, or at a second signal, the
// process exits: every command stops within a second of the signal, also
// one stuck in a loop that does not look at its context. What a cut-short
// cleanup leaves is safe: the store is crash-safe, managed children die
// with their parent (parent-death signal), host knobs are restored from
// their journal at the worker's next start.
const stopGrace = 700 * time.Millisecond

// signalContext returns a context cancelled by the first SIGINT or
// SIGTERM, and the watchdog above; stop releases both.
func signalContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { // owned: ends with done, or ends the process
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-done:
			return
		}
		cancel()
		t := time.NewTimer(stopGrace)
		select {
		case <-done:
			return
		case <-sigs:
		case <-t.C:
		}
		fmt.Fprintf(stderr, "writepath: %v: not stopped within %v; exiting without finishing cleanup\n", sig, stopGrace)
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
