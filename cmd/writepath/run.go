package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/workload"
)

// runOptions are writepath's own flags of `run`; everything else belongs
// to the kind.
type runOptions struct {
	conn         connFlags
	workers      uint32
	selectors    []string
	localWorkers int
	db           string
	dataDir      string
	interval     time.Duration
	json         bool
	show         string
	devices      []string
	host         []string // --host k=v
	disk         string   // --disk PROFILE
	trace        traceFlags
	allow        embeddedGuardFlags
	// progress, if set, replaces stderr for the embedded workers' progress.
	progress io.Writer
	// stdin is where `writepath sysbench` reads a Lua script (nil: none).
	stdin io.Reader
	// usage, if set, prints these flags in sysbench's --help.
	usage func(io.Writer)
	// notes: the sysbench output's writepath notes (writepath sysbench --notes).
	notes bool
	// output prints the result in the kind's own format instead of the
	// summary (fio's --output-format); set by runKind.
	output workload.OutputFunc
}

func (o *runOptions) flagSet() *pflag.FlagSet {
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.conn.addFlagSet(f, "coordinator address; without it, run an embedded fabric")
	f.Uint32Var(&o.workers, "workers", 0, "use this many of the selected workers (default all)")
	f.StringArrayVar(&o.selectors, "select", nil, "select workers by label k=v, or name=N (repeatable)")
	f.IntVar(&o.localWorkers, "local-workers", 1, "embedded fabric: how many in-process workers")
	f.StringVar(&o.db, "db", "writepath.db", "embedded fabric: the store file")
	f.StringVar(&o.dataDir, "data-dir", ".", "embedded fabric: the workers' data directory")
	f.DurationVar(&o.interval, "interval", 0, "reporting interval (default the coordinator's, 1s)")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON on stdout (progress goes to stderr)")
	f.StringVar(&o.show, "show", "lines,summary", "what to print, comma-separated: lines, summary, none; iostat, innodb, block and syscalls add telemetry and kernel series to the lines")
	f.StringSliceVar(&o.devices, "devices", nil, "embedded fabric: also sample these block devices beside the data dir's")
	f.StringArrayVar(&o.host, "host", nil, "host knob k=v every worker sets around each phase and restores (scheduler=none, nr_requests=512, dirty_ratio=20, mount=noatime,...; repeatable); embedded: needs root")
	f.StringVar(&o.disk, "disk", "", "a cloud-disk profile around every phase: a built-in ("+strings.Join(diskprofile.BuiltinNames(), ", ")+
		") or custom, with key=value overrides, e.g. capacity,bucket=50000,size=4G (a loop filesystem at DATA-DIR/disk) or gp3,device=/dev/sdb; embedded: needs root")
	o.trace.addFlagSet(f)
	o.allow.addFlagSet(f)
	return f
}

// ownFlags names the flags of flagSet and whether each takes a value.
func (o *runOptions) ownFlags() map[string]bool {
	own := map[string]bool{}
	o.flagSet().VisitAll(func(f *pflag.Flag) { own[f.Name] = f.Value.Type() != "bool" })
	return own
}

func (o *runOptions) Validate() error {
	if o.localWorkers < 1 {
		return fmt.Errorf("--local-workers %d: want at least 1", o.localWorkers)
	}
	if o.interval != 0 && o.interval < 10*time.Millisecond {
		return fmt.Errorf("--interval %v: want at least 10ms", o.interval)
	}
	if _, err := client.ParseShow(o.show); err != nil {
		return err
	}
	if _, err := diskSpec(o.disk); err != nil {
		return fmt.Errorf("--disk: %w", err)
	}
	if _, err := parseHostFlags(o.host); err != nil {
		return err
	}
	_, err := parseLabels(o.selectors, "--select")
	return err
}

// newRunCmd is `writepath run KIND [PHASE...] <kind args>`.
func newRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run KIND [PHASE...] [kind options]",
		Short: "Run a workload on the fabric (an embedded one without --coordinator)",
		Long: "Run a workload kind on every selected worker at the same moment and print one line per merged\n" +
			"interval, then the summary. Words after KIND that name its phases select them (default: all).\n" +
			"Other arguments go to the kind in its own syntax (fio options or job files, sysbench options);\n" +
			"writepath's flags: --coordinator --tls-cert --tls-key --tls-ca --tls-server-name --token-file --workers --select --local-workers --db --data-dir --devices --interval --json\n" +
			"--host k=v (a host knob each worker sets around every phase and restores: " + strings.Join(hostknob.Names(), ", ") + "; `writepath worker --help` says what each sets)\n" +
			"--disk PROFILE (a cloud-disk profile each worker applies around every phase: `writepath disk profiles`)\n" +
			"--no-trace --trace-pid --trace-comm --trace-redo (embedded fabric: eBPF block-layer and syscall series)\n" +
			"--allow-path --allow-setting (embedded fabric: its workers may use only the data dir and what the kind's options name)\n" +
			"--show (lines, summary, none; iostat, innodb, block, syscalls and disk add telemetry and kernel series to the lines).\n" +
			"Exit status: 0 finished, 3 partial (a worker was lost), 1 otherwise.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			return runKind(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runKind parses, builds the spec, and runs it on a coordinator.
func runKind(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	meta, ok := workload.ByName(args[0])
	if !ok {
		return fmt.Errorf("unknown kind %s (kinds: %v)", echo.Quote(args[0]), kindNames())
	}
	o := &runOptions{}
	mine, kindArgs := splitOwnFlags(args[1:], o.ownFlags())
	if err := o.flagSet().Parse(mine); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if wantsHelp(meta, kindArgs) {
		return kindHelp(meta, stdout)
	}
	if frontEndOrder(meta, kindArgs) {
		// `run oltp oltp_write_only [options] COMMAND`: sysbench's order
		// and output, merged over the fabric.
		return o.runFrontEnd(ctx, meta, kindArgs, stdout, stderr)
	}
	phases, kindArgs := leadingPhases(kindArgs, func(s string) bool { _, ok := meta.Phase(s); return ok })
	if o.conn.coordinator == "" {
		if meta.Local != nil {
			newArgs, cleanup, err := meta.Local(ctx, kindArgs, stderr)
			if err != nil {
				return err
			}
			defer cleanup()
			kindArgs = newArgs
		}
	}
	kindArgs, unseal, err := sealSecrets(meta.Secrets, kindArgs, o.conn.coordinator == "")
	if err != nil {
		return err
	}
	defer unseal()
	spec, err := o.buildSpec(meta, phases, kindArgs)
	if err != nil {
		return err
	}
	c, closeFabric, err := o.connect(spec, kindArgs, hostNames(spec.GetHost()), stderr)
	if err != nil {
		return err
	}
	defer closeFabric()
	if meta.Output != nil && !o.json {
		o.output = meta.Output(spec.GetSpec().GetValue())
	}
	return o.follow(ctx, c, spec, stdout, stderr)
}

// buildSpec turns kind arguments into a validated, packed spec.
func (o *runOptions) buildSpec(meta workload.Meta, phases, kindArgs []string) (*writepathv1.RunSpec, error) {
	if meta.FromArgs == nil {
		return nil, fmt.Errorf("kind %s takes no command-line options", meta.Name)
	}
	b, err := meta.FromArgs(kindArgs)
	if err != nil {
		return nil, err
	}
	// Decode here too, so invalid options fail before anything is submitted.
	if _, err := meta.New(b); err != nil {
		return nil, err
	}
	sel, _ := parseLabels(o.selectors, "--select")
	host, _ := parseHostFlags(o.host) // checked by Validate
	disk, _ := diskSpec(o.disk)       // checked by Validate
	spec := &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: meta.Kind, Value: b}, Phases: phases,
		Selector: sel, Workers: o.workers, Host: host, Disk: disk}
	if o.interval > 0 {
		spec.Interval = durationpb.New(o.interval)
	}
	return spec, nil
}

// follow runs spec, printing as asked; the exit status says how it ended.
func (o *runOptions) follow(ctx context.Context, c *client.Client, spec *writepathv1.RunSpec, stdout, stderr io.Writer) error {
	progress := stdout
	if o.json || o.output != nil {
		progress = stderr
	}
	show, _ := client.ParseShow(o.show) // checked by Validate
	p := &client.Printer{W: progress, Show: show}
	if m, ok := workload.Lookup(spec.GetSpec().GetTypeUrl()); ok {
		p.Kind = clientKind(m)
	}
	onEvent := p.Event
	if !show.Lines {
		onEvent = nil
	}
	run, err := c.Run(ctx, spec, onEvent)
	if run == nil {
		return err
	}
	if show.Summary || o.json {
		if serr := o.printSummary(ctx, c, run.GetId(), stdout); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return exitFor(run.GetState())
}

func (o *runOptions) printSummary(ctx context.Context, c *client.Client, id string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	detail, err := results.Read(ctx, c, id, results.PerWorker)
	if err != nil {
		return err
	}
	if o.output != nil {
		return o.output(w, measuredParts(detail))
	}
	s, err := client.Summarize(detail, kindOf(detail.Record.GetKindName()))
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintln(w)
	return client.WriteSummary(w, s)
}

// measuredParts is what each worker reported at the end of the run's
// last measured phase.
func measuredParts(detail *results.Run) []workload.Part {
	var parts []workload.Part
	for _, ph := range detail.Record.GetPhases() {
		if !ph.GetMeasured() {
			continue
		}
		parts = parts[:0]
		for _, pw := range ph.GetWorkers() {
			parts = append(parts, workload.Part{Worker: pw.GetWorker(), Summary: pw.GetSummary(), Err: pw.GetError()})
		}
	}
	return parts
}

// exitFor maps a run's final state to the process's exit status.
func exitFor(s writepathv1.RunState) error {
	switch s {
	case writepathv1.RunState_RUN_STATE_FINISHED:
		return nil
	case writepathv1.RunState_RUN_STATE_PARTIAL:
		return exitCode(3)
	}
	return exitCode(1)
}

func kindNames() []string {
	var out []string
	for _, m := range workload.Kinds() {
		out = append(out, m.Name)
	}
	return out
}
