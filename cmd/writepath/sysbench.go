package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/sysbench"
)

// sysbenchOptions are writepath's flags of `writepath sysbench`; every
// other argument is sysbench's.
type sysbenchOptions struct {
	run       runOptions
	perWorker bool
	notes     bool
}

func (o *sysbenchOptions) flagSet() *pflag.FlagSet {
	f := pflag.NewFlagSet("sysbench", pflag.ContinueOnError)
	o.run.conn.addFlagSet(f, "run on this coordinator's workers and print their merged result")
	f.Uint32Var(&o.run.workers, "workers", 0, "use this many of the selected workers (default all)")
	f.StringArrayVar(&o.run.selectors, "select", nil, "select workers by label k=v, or name=N (repeatable)")
	f.IntVar(&o.run.localWorkers, "local-workers", 0, "run on an embedded fabric of this many in-process workers")
	f.StringVar(&o.run.db, "db", "writepath.db", "embedded fabric: the store file")
	f.StringVar(&o.run.dataDir, "data-dir", ".", "embedded fabric: the workers' data directory")
	f.BoolVar(&o.perWorker, "per-worker", false, "through a fabric: also print each worker's own report")
	f.BoolVar(&o.notes, "notes", false, "also print writepath's notes sysbench has no line for (seed, late transactions, uncorrected latency)")
	o.run.show = "lines,summary"
	return f
}

func (o *sysbenchOptions) ownFlags() map[string]bool {
	own := map[string]bool{}
	o.flagSet().VisitAll(func(f *pflag.Flag) { own[f.Name] = f.Value.Type() != "bool" })
	return own
}

// newSysbenchCmd is `writepath sysbench [writepath flags] oltp_write_only
// [options] prepare|prewarm|run|cleanup|help`.
func newSysbenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sysbench [--coordinator ADDR | --local-workers N] oltp_write_only [sysbench options] prepare|prewarm|run|cleanup|help",
		Short: "sysbench 1.0.20's oltp_write_only: its command line, exit statuses and output (locally, or merged over a fabric)",
		Long: "Runs sysbench 1.0.20's oltp_write_only command as sysbench does, with sysbench's output on stdout.\n" +
			"With --coordinator (or --local-workers N) the command runs on the fabric's workers and their result is\n" +
			"printed merged, as one sysbench run of all their threads (--per-worker adds each worker's).\n" +
			"`writepath sysbench --help` lists every option; `writepath sysbench oltp_write_only help` the test's.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSysbench(cmd.Context(), args, scriptInput(cmd.InOrStdin()), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runSysbench wires writepath's flags, an optional fabric and the command.
func runSysbench(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := &sysbenchOptions{}
	o.run.stdin = stdin
	mine, rest := splitOwnFlags(args, o.ownFlags())
	if err := o.flagSet().Parse(mine); err != nil {
		return err
	}
	o.run.usage = func(w io.Writer) {
		io.WriteString(w, "writepath sysbench flags (before or among sysbench's):\n")
		fs := o.flagSet() // a new set each call: print from the one given w (was stderr's)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	o.run.notes = o.notes
	if o.run.conn.coordinator == "" && o.run.localWorkers == 0 {
		return o.run.sysbenchLocal(ctx, rest, stdout, stderr)
	}
	if o.run.localWorkers == 0 {
		o.run.localWorkers = 1
	}
	if err := o.run.Validate(); err != nil {
		return err
	}
	return o.run.sysbench(ctx, rest, stdout, stderr, o.perWorker)
}

// sysbenchLocal runs a sysbench command in this process.
func (o *runOptions) sysbenchLocal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := sysbench.Config{Version: version, Stdin: o.stdin, Stdout: stdout, Stderr: stderr, Usage: o.usage, Notes: o.notes}
	return sysbenchExit(sysbench.Main(ctx, args, cfg))
}

// sysbench runs a sysbench command on the fabric o names (an embedded one
// without --coordinator) and prints the merged result as sysbench does.
func (o *runOptions) sysbench(ctx context.Context, args []string, stdout, stderr io.Writer, perWorker bool) error {
	cfg := sysbench.Config{Version: version, Stdin: o.stdin, Stdout: stdout, Stderr: stderr, Usage: o.usage, Notes: o.notes}
	o.progress = io.Discard // sysbench prints nothing of a worker's own
	cfg.Fabric = func(rs *writepathv1.RunSpec) (*sysbench.Fabric, func(), error) {
		c, closeFabric, err := o.connect(rs, args, nil, stderr)
		if err != nil {
			return nil, nil, err
		}
		sel, _ := parseLabels(o.selectors, "--select")
		return &sysbench.Fabric{Client: c, Selector: sel, Workers: o.workers, PerWorker: perWorker}, closeFabric, nil
	}
	return sysbenchExit(sysbench.Main(ctx, args, cfg))
}

func sysbenchExit(code int) error {
	if code != 0 {
		return exitCode(code)
	}
	return nil
}

// scriptInput is standard input as sysbench reads a script from it, or
// nil on a terminal (where sysbench would wait for one to be typed).
func scriptInput(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok {
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			return nil
		}
	}
	return r
}
