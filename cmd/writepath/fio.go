package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/fio"
)

// newFioCmd is `writepath fio <fio args...>`: fio's own options and job
// files, run locally and directly (no fabric). Arguments go untouched to the
// fio parser, so fio's syntax (--name=x --rw=randwrite ..., job files,
// --output-format, --output) works as pasted.
func newFioCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "fio [fio options] [job files]",
		Short:              "Run fio jobs (fio's options, job files and output formats) locally",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					return cmd.Help()
				}
			}
			return runFio(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runFio wires the parser, the workload, a once-a-second Recorder tick and
// the report together.
func runFio(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	spec, err := fio.ParseArgs(args)
	if err != nil {
		return err
	}
	w, err := fio.New(spec)
	if err != nil {
		return err
	}
	out := stdout
	if spec.Output != "" {
		f, err := os.Create(spec.Output)
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		defer f.Close()
		out = f
	}
	env := workload.Env{Start: time.Now(), Progress: stderr,
		Log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	rec := workload.NewRecorder(env.Start)
	stopTicks := tickEverySecond(rec, stderr)
	runErr := w.Run(ctx, fio.PhaseRun, env, rec)
	stopTicks()
	if repErr := w.Report(out); repErr != nil && runErr == nil {
		return repErr
	}
	return runErr
}

// tickEverySecond closes a Recorder interval each second and, on a
// terminal, shows it as a live line. The returned func stops it and waits.
func tickEverySecond(rec *workload.Recorder, stderr io.Writer) (stop func()) {
	f, isFile := stderr.(*os.File)
	live := false
	if isFile {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		live = err == nil
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				line := fio.ProgressLine(rec.Tick(now))
				if live {
					fmt.Fprintf(stderr, "\r%s\x1b[K", line)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if live {
			fmt.Fprint(stderr, "\r\x1b[K")
		}
	}
}
