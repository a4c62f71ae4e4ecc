package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/hostknob"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
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
			"  [--power-loss [--torn-writes] [--torn-seed N] [--cut-when-dirty] [--cut-wait D]] [--disk PROFILE [--data-dir DIR]] [oltp options] [--json]",
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
			"tablespaces hold un-synced writes.\n" +
			"--disk PROFILE caps a loop filesystem at DATA-DIR/disk (--data-dir, default .) like a cloud disk for the\n" +
			"rounds (see `writepath run --help`); put the server on it with --dir disk/crash.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := crashOptions{dataDir: "."}
			var rest []string
			for i := 0; i < len(args); i++ {
				a := args[i]
				name, val, hasVal := strings.Cut(a, "=")
				switch {
				case a == "--help" || a == "-h":
					if err := cmd.Help(); err != nil {
						return err
					}
					fmt.Fprintln(cmd.OutOrStdout())
					return crash.WriteOptions(cmd.OutOrStdout())
				case a == "--json":
					o.json = true
				case name == "--disk" || name == "--data-dir":
					if !hasVal {
						if i+1 >= len(args) {
							return fmt.Errorf("%s needs a value", name)
						}
						i++
						val = args[i]
					}
					if name == "--disk" {
						o.disk = val
					} else {
						o.dataDir = val
					}
				default:
					rest = append(rest, a)
				}
			}
			return runCrash(cmd.Context(), rest, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// crashOptions are `crash`'s own flags.
type crashOptions struct {
	json    bool
	disk    string // --disk: a disk profile around the rounds
	dataDir string // --data-dir: where --disk's loop filesystem goes
}

// runCrash wires the parser, the workload and the report together.
func runCrash(ctx context.Context, args []string, o crashOptions, stdout, stderr io.Writer) error {
	disk, err := diskSpec(o.disk)
	if err != nil {
		return fmt.Errorf("--disk: %w", err)
	}
	b, err := crash.FromArgs(args)
	if err != nil {
		return err
	}
	w, err := crash.New(b)
	if err != nil {
		return err
	}
	env := workload.Env{Start: time.Now(), Progress: stderr,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if disk != nil {
		release, err := crashDisk(disk, o.dataDir, stderr)
		if err != nil {
			return err
		}
		defer release()
		env.DataDir = o.dataDir
	}
	runErr := workload.Drive(ctx, w, crash.PhaseRounds, env, 0, nil)
	if res, err := summaryOf(w, crash.PhaseRounds); err == nil && len(res.Rounds) > 0 {
		if err := writeCrash(stdout, res, o.json); err != nil && runErr == nil {
			return err
		}
	}
	return runErr
}

// crashDisk applies a disk profile for the rounds: relative paths (--dir
// disk/crash) are then under --data-dir, where the loop filesystem is.
func crashDisk(spec *writepathv1.DiskSpec, dataDir string, stderr io.Writer) (func(), error) {
	knobs, d, err := openHostChanges(dataDir, hostknob.Allow{}, diskprofile.AllowAll(), "--disk", knobsLog(stderr))
	if err != nil {
		return nil, err
	}
	stop := func() { closeDisks(d, stderr); closeKnobs(knobs) }
	if err := d.Prepare(spec); err != nil {
		stop()
		return nil, err
	}
	h, err := d.Apply(spec)
	if err != nil {
		stop()
		return nil, err
	}
	return func() {
		if v := h.Values(); len(v) > 0 {
			fmt.Fprintf(stderr, "disk profile %s: at the end cap %.0f IOPS %.1f MB/s, credits %.0f\n", spec.GetName(),
				v["disk.cap_iops"], v["disk.cap_mbps"], v["disk.credits"])
		}
		if err := h.Restore(); err != nil {
			fmt.Fprintf(stderr, "disk profile: %v\n", err)
		}
		stop()
	}, nil
}

func writeCrash(w io.Writer, res crash.Result, asJSON bool) error {
	if !asJSON {
		return res.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// summaryOf reads the crash result back through the kind's Summarizer, as
// a worker's PhaseDone carries it: the command knows the crash kind only
// by its result type.
func summaryOf(w workload.Workload, phase string) (crash.Result, error) {
	var res crash.Result
	sz, ok := w.(workload.Summarizer)
	if !ok {
		return res, fmt.Errorf("crash: no summary")
	}
	b, err := sz.Summary(phase)
	if err != nil {
		return res, err
	}
	return res, json.Unmarshal(b, &res)
}
