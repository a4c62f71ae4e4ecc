// Command oltpbench runs one phase of writepath's oltp workload in this
// process, without the fabric, so that bench/oltp.sh can time it from the
// outside exactly as it times sysbench:
//
//	oltpbench prepare|run|cleanup [sysbench options]
//
// The run summary goes to stdout in sysbench's layout (a diagnostic:
// bench/oltp.sh measures `writepath run oltp run`); the progress bar
// and interval lines go to stderr.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/writepath/writepath/internal/preempt"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

func main() {
	preempt.Off() // the oltp run phase's blocking reads; see the package
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// OLTPBENCH_CPUPROFILE=FILE writes a CPU profile of the whole phase,
	// to see where the client's time per transaction goes.
	if path := os.Getenv("OLTPBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "oltpbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: oltpbench prepare|run|cleanup [sysbench options]")
	}
	phase := args[0]
	spec, err := oltp.ParseArgs(args[1:])
	if err != nil {
		return err
	}
	w, err := oltp.NewFromSpec(spec)
	if err != nil {
		return err
	}
	env := workload.Env{Start: time.Now(), Progress: os.Stderr,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	start := time.Now()
	// Intervals every second, as a worker would close them.
	err = workload.Drive(ctx, w, phase, env, time.Second, nil)
	if err != nil {
		return err
	}
	if phase == oltp.PhasePrepare {
		o := w.Options
		rows := float64(o.Tables * o.TableSize)
		fmt.Printf("prepare: %d rows in %.2fs (%.0f rows/s, %d threads)\n", o.Tables*o.TableSize,
			time.Since(start).Seconds(), rows/time.Since(start).Seconds(), o.Threads)
	}
	// Summary(phase) is the phase's JSON report; the script and a reader
	// want sysbench's text layout, as before.
	if phase == oltp.PhaseRun {
		if s := w.RunSummary(); s != nil {
			fmt.Print(s.Text())
		}
	}
	return nil
}
