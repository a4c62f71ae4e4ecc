// Package sysbench is `writepath sysbench`: sysbench 1.0.20's command
// line for oltp_write_only, its exit statuses and its text, line for line,
// over the oltp kind. A command runs in this process (as sysbench does) or,
// given a client of a coordinator, on the fabric's workers, whose results
// it prints merged as sysbench would print one run of all their threads.
package sysbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

// Config is what a command needs besides its arguments.
type Config struct {
	// Version is writepath's, shown in the banner.
	Version string
	Stdout  io.Writer
	Stderr  io.Writer
	// Stdin is where sysbench reads a Lua script when no test is named
	// (nil: none, as a terminal).
	Stdin io.Reader
	// Fabric, if set, runs the command on a coordinator's workers: it is
	// called with the run to submit (an embedded fabric guards its workers
	// to what the run needs), only for a command that runs something.
	Fabric func(run *writepathv1.RunSpec) (*Fabric, func(), error)
	// Usage, if set, prints writepath's own flags in sysbench's --help
	// (on Stdout, after the drivers' options).
	Usage func(w io.Writer)
	// Notes prints writepath's notes sysbench's output has no place for.
	Notes bool
}

// Exit statuses, as sysbench's.
const (
	exitOK     = 0
	exitFailed = 1
	// exitForced is sysbench's status after --forced-shutdown.
	exitForced = 2
)

// Main runs one sysbench command line and returns its exit status.
func Main(ctx context.Context, args []string, cfg Config) int {
	cl, ex := oltp.ParseCommandLine(args)
	for _, n := range cl.Notices {
		w := cfg.Stdout
		if strings.HasPrefix(n, "WARNING: the --test") {
			w = cfg.Stderr
		}
		fmt.Fprintln(w, n)
	}
	switch {
	case cl.Help:
		_ = oltp.WriteUsage(cfg.Stdout, cfg.Usage)
		return exitOK
	case cl.Version:
		fmt.Fprintf(cfg.Stdout, "sysbench 1.0.20 (writepath %s)\n", cfg.Version)
		return exitOK
	}
	if ex != nil && !ex.Banner {
		return printExit(cfg, ex)
	}
	cl.Output.Notes = cfg.Notes
	text := oltp.NewText(cfg.Stdout, cl.Output)
	text.Printf(oltp.LevelNotice, "sysbench 1.0.20 (using writepath %s)\n", cfg.Version)
	if ex != nil {
		if ex.Stdin && emptyScript(ctx, cfg.Stdin) {
			return exitOK // an empty script: sysbench runs it, doing nothing
		}
		if ex.RunHeader {
			runMode(text, cl, 1)
			text.Printf(oltp.LevelNotice, "Initializing worker threads...\n")
		}
		return printExit(cfg, ex)
	}
	if cl.Command == "help" {
		_ = oltp.WriteTestHelp(cfg.Stdout, cl.Test)
		return exitOK
	}
	if cl.Command == "run" && cfg.Fabric == nil {
		runMode(text, cl, 1) // on a fabric, once it knows its workers
	}
	if cfg.Fabric != nil {
		rs, err := runSpec(cl)
		if err != nil {
			text.Printf(oltp.LevelFatal, "%v", err)
			return exitFailed
		}
		f, closeFabric, err := cfg.Fabric(rs)
		if err != nil {
			text.Printf(oltp.LevelFatal, "%v", err)
			return exitFailed
		}
		defer closeFabric()
		return f.run(ctx, cl, rs, text)
	}
	return inProcess(ctx, cl, text)
}

// maxScript is how much of a script on standard input is read to see
// whether it is empty.
const maxScript = 1 << 20

// emptyScript reports whether r holds a script with nothing in it but
// white space, reading to its end (up to maxScript) or until ctx ends.
func emptyScript(ctx context.Context, r io.Reader) bool {
	if r == nil {
		return false
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, maxScript+1))
		done <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return false
	case res := <-done:
		return res.err == nil && len(res.b) <= maxScript && len(bytes.TrimSpace(res.b)) == 0
	}
}

func printExit(cfg Config, ex *oltp.Exit) int {
	fmt.Fprint(cfg.Stdout, ex.Stdout)
	fmt.Fprint(cfg.Stderr, ex.Stderr)
	return ex.Code
}

// runMode is sysbench's print_run_mode: the options the run starts with,
// the threads and rate those of all its workers (each runs the spec's).
func runMode(t *oltp.Text, cl *oltp.CommandLine, workers int) {
	s := cl.Spec
	t.Printf(oltp.LevelNotice, "Running the test with following options:")
	t.Printf(oltp.LevelNotice, "Number of threads: %d", int(s.GetThreads())*workers)
	if s.GetRate() > 0 {
		t.Printf(oltp.LevelNotice, "Target transaction rate: %d/sec", int(s.GetRate())*workers)
	}
	if s.GetReportIntervalSeconds() > 0 {
		t.Printf(oltp.LevelNotice, "Report intermediate results every %d second(s)", s.GetReportIntervalSeconds())
	}
	if cps := s.GetReportCheckpoints(); len(cps) > 0 {
		var l []string
		for _, c := range cps {
			l = append(l, fmt.Sprint(c))
		}
		t.Printf(oltp.LevelNotice, "Report checkpoint(s) at %s seconds", strings.Join(l, ", "))
	}
	if cl.Output.Debug {
		t.Printf(oltp.LevelNotice, "Debug mode enabled.\n")
	}
	if cl.Output.Validate {
		t.Printf(oltp.LevelNotice, "Validation checks: on.\n")
	}
	if cl.Seed != 0 {
		t.Printf(oltp.LevelNotice, "Initializing random number generator from seed (%d).\n", cl.Seed)
	} else {
		t.Printf(oltp.LevelNotice, "Initializing random number generator from current time\n")
	}
	t.Printf(oltp.LevelNote, "writepath: random seed %d (repeat the run with --rand-seed=%d)", s.GetRandSeed(), s.GetRandSeed())
	if s.ForcedShutdownSeconds != nil {
		t.Printf(oltp.LevelNotice, "Forcing shutdown in %d seconds", s.GetTimeSeconds()+s.GetForcedShutdownSeconds())
	}
	t.Printf(oltp.LevelNotice, "")
}

// inProcess runs the command in this process, as sysbench does.
func inProcess(ctx context.Context, cl *oltp.CommandLine, text *oltp.Text) int {
	w, err := oltp.NewFromSpec(cl.Spec)
	if err != nil {
		text.Printf(oltp.LevelFatal, "%v", err)
		return exitFailed
	}
	w.Text, w.NoStatus = text, true // no one reads the Recorder here
	env := workload.Env{Start: time.Now(), Log: slog.New(slog.DiscardHandler)}
	err = workload.Drive(ctx, w, cl.Command, env, 0, nil)
	var sum *oltp.Summary
	if cl.Command == oltp.PhaseRun {
		sum = w.RunSummary()
	}
	return finish(text, sum, err)
}

// finish prints how a command ended, as sysbench does, and returns the
// exit status: the report after a run; sysbench's words for a forced
// shutdown (with the report, status 2) and a full event queue; otherwise
// the error.
func finish(text *oltp.Text, sum *oltp.Summary, err error) int {
	switch {
	case errors.Is(err, oltp.ErrForcedShutdown):
		text.Printf(oltp.LevelFatal, "%v", oltp.ErrForcedShutdown)
		if sum != nil {
			sum.Report(text)
		}
		return exitForced
	case errors.Is(err, oltp.ErrQueueFull):
		text.Printf(oltp.LevelFatal, "%v", oltp.ErrQueueFull)
		return exitFailed
	case errors.Is(err, context.Canceled):
		text.Printf(oltp.LevelFatal, "interrupted")
		return exitFailed
	case err != nil:
		for _, line := range strings.Split(err.Error(), "\n") {
			text.Printf(oltp.LevelFatal, "%s", line)
		}
		return exitFailed
	}
	if sum != nil {
		sum.Report(text)
	}
	return exitOK
}
