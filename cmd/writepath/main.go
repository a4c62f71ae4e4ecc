// Command writepath is a distributed load-test fabric for the database write
// path: fio-equivalent direct-IO jobs, sysbench-compatible OLTP write-only
// load and crash-recovery timing, run on many hosts at the same moment with
// exactly merged latency histograms.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/internal/preempt"
)

func main() {
	preempt.Off() // the oltp run phase's blocking reads; see the package
	if r, err := strconv.Atoi(os.Getenv("WRITEPATH_MEMPROFILERATE")); err == nil && r > 0 {
		runtime.MemProfileRate = r
	}
	os.Exit(profiled(os.Getenv("WRITEPATH_CPUPROFILE"), func() int {
		defer allocProfile(os.Getenv("WRITEPATH_ALLOCPROFILE"))
		return execute(os.Args[1:])
	}))
}

// allocProfile writes the allocations of the whole run (pprof's allocs:
// every allocation since the start, sampled, and the heap live at the
// end) to path, if not empty: what the embedded fabric allocates beside
// the workload (bench/oltp.md). WRITEPATH_MEMPROFILERATE sets the
// sampling rate (bytes; the runtime's default: 512 KiB).
func allocProfile(path string) {
	if path == "" {
		return
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writepath: WRITEPATH_ALLOCPROFILE:", err)
		return
	}
	defer out.Close()
	runtime.GC() // the profile is as of the last collection: include the end
	if err := pprof.Lookup("allocs").WriteTo(out, 0); err != nil {
		fmt.Fprintln(os.Stderr, "writepath: WRITEPATH_ALLOCPROFILE:", err)
	}
}

// profiled runs f with a CPU profile of the whole process written to path
// (none when path is empty or cannot be created): bench/oltp.md's profiles
// of the user's command, embedded fabric included, come from it.
func profiled(path string, f func() int) int {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writepath: WRITEPATH_CPUPROFILE:", err)
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintln(os.Stderr, "writepath: WRITEPATH_CPUPROFILE:", err)
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}

// execute runs the command args name (extra commands join the table:
// tests add some) and returns the exit status. SIGINT and SIGTERM cancel
// the command's context; one that has not returned stopGrace later is
// ended (signals.go).
func execute(args []string, extra ...*cobra.Command) int {
	ctx, stop := signalContext(os.Stderr)
	defer stop()
	root := newRootCmd()
	root.AddCommand(extra...)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ec exitCode
	if errors.As(err, &ec) {
		return int(ec)
	}
	fmt.Fprintln(os.Stderr, "writepath:", err)
	return 1
}

// exitCode ends the process with a status and no further message (the
// command already said what went wrong).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
