// Package preempt turns the Go runtime's asynchronous preemption off for
// a whole process, which only GODEBUG at start-up can do.
//
// Why: the oltp run phase (workload/oltp/client.go) keeps one goroutine
// per connection in a raw, blocking read(2), as sysbench keeps a thread.
// To the runtime those goroutines run without pause, so sysmon preempts
// each every 10 ms; with asynchronous preemption that is a signal, an
// interrupted read and a yield every time. At 64 connections on 2 CPUs
// that cost 0.12 ms of client CPU per transaction against 0.075 ms
// without it (and took as much from the server beside it). Goroutines are
// still preempted without it, at their next function call; only a loop
// without calls cannot be, which no writepath code relies on.
//
// GODEBUG's asyncpreemptoff cannot be set with a //go:debug directive
// (it is not a registered setting) nor changed after start-up, so Off
// starts the program again with it set.
package preempt

import (
	"os"
	"strings"
	"syscall"
)

// setting is what Off adds to GODEBUG.
const setting = "asyncpreemptoff=1"

// Off re-executes the running program with asyncpreemptoff=1 added to
// GODEBUG, unless GODEBUG already says anything about asyncpreemptoff
// (a user's explicit choice, or this is the re-executed program). It
// returns only when the program runs as it is: the setting was there, or
// the re-execution failed (then the process runs on with preemption, which
// is slower but correct). Call it first in main, before any goroutine or
// open file matters.
func Off() {
	env := os.Getenv("GODEBUG")
	if strings.Contains(env, "asyncpreemptoff=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if env != "" {
		env += ","
	}
	_ = syscall.Exec(exe, os.Args, withGODEBUG(os.Environ(), env+setting))
}

// withGODEBUG returns environ with every GODEBUG entry replaced by one set
// to value: with two, the new program could read the old one and start
// yet again.
func withGODEBUG(environ []string, value string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			out = append(out, kv)
		}
	}
	return append(out, "GODEBUG="+value)
}
