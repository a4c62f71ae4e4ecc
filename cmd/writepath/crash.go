package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/crash"
)

// newCrashCmd is `writepath crash [options]`: crash-recovery rounds on a
// managed server, run locally and directly (no fabric). The crash options
// and any sysbench oltp_write_only option for the load go to the crash
// parser untouched; --json is this command's own.
func newCrashCmd() *cobra.Command {
	return &cobra.Command{
		Use: "crash [--rounds N] [--load-time D] [--kill-at D|D1-D2] [--drop-caches] [--set k=v ...] [--binary PATH] [--dir DIR]\n" +
			"  [--power-loss [--torn-writes] [--torn-seed N] [--cut-when-dirty] [--cut-wait D]] [oltp options] [--json]",
		Short: "Time InnoDB crash recovery (load, kill -9 or power cut, restart) and check that acknowledged commits survive",
		Long: "Runs --rounds rounds (default 3) of: restore the datadir snapshot, start the managed server with\n" +
			"the --set settings, run the OLTP write-only load (--tables, --table-size, --threads, ...) for\n" +
			"--load-time, kill -9 it at --kill-at, optionally drop the page cache, restart, and time the recovery\n" +
			"from the live error log; then check the durability ledger and CHECK TABLE.\n\n" + crash.ModeNote + ".\n\n" +
			"--power-loss serves the datadir (and any separate InnoDB directory) through a FUSE layer that keeps\n" +
			"un-synced writes in memory, and drops them after the kill: a power cut, which also tests fsync\n" +
			"durability. The load runs through the layer (slower: see bench/powerloss.sh); the restart runs on the\n" +
			"backing directory without it.\n" +
			"--torn-writes keeps a random 4 KiB-aligned prefix of each un-synced write instead (seed: --torn-seed,\n" +
			"recorded), and implies --cut-when-dirty: the kill waits (at most --cut-wait, default 10s) until\n" +
			"tablespaces hold un-synced writes.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON := false
			var rest []string
			for _, a := range args {
				switch a {
				case "--help", "-h":
					return cmd.Help()
				case "--json":
					asJSON = true
				default:
					rest = append(rest, a)
				}
			}
			return runCrash(cmd.Context(), rest, asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runCrash wires the parser, the workload and the report together.
func runCrash(ctx context.Context, args []string, asJSON bool, stdout, stderr io.Writer) error {
	spec, err := crash.FromArgs(args)
	if err != nil {
		return err
	}
	w, err := crash.New(spec)
	if err != nil {
		return err
	}
	env := workload.Env{Start: time.Now(), Progress: stderr,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	res, runErr := w.(*crash.Workload).Rounds(ctx, env, workload.NewRecorder(env.Start))
	if len(res.Rounds) > 0 {
		if err := writeCrash(stdout, res, asJSON); err != nil && runErr == nil {
			return err
		}
	}
	return runErr
}

func writeCrash(w io.Writer, res crash.Result, asJSON bool) error {
	if !asJSON {
		return res.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
