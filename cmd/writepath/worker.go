package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/guard"
	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/labels"
	"github.com/writepath/writepath/worker"
)

type workerOptions struct {
	conn    connFlags
	name    string
	labels  []string
	dataDir string
	devices []string
	// The guard's opt-ins: --allow-path, --allow-binary, --allow-setting,
	// --allow-privileged, --allow-mysql, --max-job-memory.
	allow, binaries, settings, privileged, mysql []string
	maxJobMemory                                 sizeFlag
	// allowHost is --allow-host: the host knobs runs may change.
	allowHost []string
	// allowDisk is --allow-disk: what runs' disk profiles may throttle.
	allowDisk []string
	trace     traceFlags
}

func (o *workerOptions) AddFlags(cmd *cobra.Command) {
	o.conn.AddFlags(cmd, "coordinator address (host:port)")
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "worker name, unique in the fabric (default: host name)")
	f.StringArrayVar(&o.labels, "label", nil, "label k=v for --select (repeatable)")
	f.StringVar(&o.dataDir, "data-dir", ".", "root of relative paths in specs; jobs may use paths inside it only")
	f.StringArrayVar(&o.allow, "allow-path", nil, "another directory or device jobs may use (repeatable)")
	f.StringArrayVar(&o.binaries, "allow-binary", nil, "a server binary (mysqld, mariadbd) jobs may start (repeatable; default none)")
	f.StringArrayVar(&o.settings, "allow-setting", nil, "a server setting jobs may set that loads code, runs SQL, reaches files or weakens access (plugin_load_add, init_file, user, ...; repeatable; default none)")
	f.StringSliceVar(&o.privileged, "allow-privileged", nil, "host-wide actions jobs may take: drop-caches, power-loss (comma list; default none)")
	f.StringArrayVar(&o.mysql, "allow-mysql", nil, "a database server jobs may connect to beyond loopback and the allowed paths' sockets, HOST:PORT or a socket path (repeatable)")
	o.maxJobMemory = guard.DefaultMaxJobMemory
	f.Var(&o.maxJobMemory, "max-job-memory", "the most I/O buffer memory one job may hold (fio: bs x iodepth x numjobs summed), e.g. 2G")
	f.StringSliceVar(&o.devices, "devices", nil, "also sample these block devices (sda, nvme0n1, /dev/mapper/x) beside the data dir's")
	f.StringSliceVar(&o.allowHost, "allow-host", nil, "host knobs runs may set around their phases (scheduler,nr_requests,dirty_ratio,mount,...; all); default none; needs root")
	f.StringSliceVar(&o.allowDisk, "allow-disk", nil, "what runs' disk profiles may throttle: loop (loop filesystems in the data dir), device paths, or all (comma list; default none); needs root")
	o.trace.addFlagSet(f)
}

func (o *workerOptions) Validate() error {
	if o.conn.coordinator == "" {
		return fmt.Errorf("--coordinator is required")
	}
	if _, err := parseLabels(o.labels, "--label"); err != nil {
		return err
	}
	if _, err := hostknob.ParseAllow(o.allowHost); err != nil {
		return err
	}
	if _, err := diskprofile.ParseAllow(o.allowDisk); err != nil {
		return err
	}
	return o.conn.tls.Validate()
}

// parseLabels parses and bounds k=v pairs (package labels: the limits the
// coordinator checks every Hello and selector against).
func parseLabels(kvs []string, flag string) (map[string]string, error) {
	return labels.Parse(kvs, flag)
}

// newWorkerCmd is `writepath worker --coordinator ADDR --name N --label k=v --data-dir DIR`.
func newWorkerCmd() *cobra.Command {
	o := &workerOptions{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run workload phases for a coordinator (dials out, reconnects on its own)",
		Long: "Run workload phases for a coordinator (dials out, reconnects on its own).\n\n" +
			"Host knobs a run may set around each phase, if --allow-host names them (the disks and filesystem\n" +
			"behind --data-dir; the values before are journaled there and restored after the phase, and at\n" +
			"start-up after a crash):\n  " + strings.Join(hostknob.Help(), "\n  "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			w, knobs, d, err := o.newWorker()
			if err != nil {
				return err
			}
			defer closeKnobs(knobs)
			defer closeDisks(d, os.Stderr) // before the knobs: it writes their journal
			return w.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// newWorker builds the worker: its credentials, its guard, its host knobs
// and disk profiles (which first restore what a killed worker left
// changed: one journal for both).
func (o *workerOptions) newWorker() (*worker.Worker, *hostknob.Host, *disks, error) {
	labels, _ := parseLabels(o.labels, "--label")
	dial, err := o.conn.dialOptions()
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := guard.New(guard.Config{DataDir: o.dataDir, AllowPaths: o.allow, AllowBinaries: o.binaries,
		AllowSettings: o.settings, AllowPrivileged: o.privileged, AllowMySQL: o.mysql, MaxJobMemory: int64(o.maxJobMemory)})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--data-dir/--allow-*: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	allowHost, _ := hostknob.ParseAllow(o.allowHost)
	allowDisk, _ := diskprofile.ParseAllow(o.allowDisk) // checked by Validate
	knobs, d, err := openHostChanges(o.dataDir, allowHost, allowDisk, "--allow-host/--allow-disk", log)
	if err != nil {
		return nil, nil, nil, err
	}
	mode := "plaintext"
	if o.conn.tls.Enabled() {
		mode = "mutual TLS, coordinator verified against " + o.conn.tls.CA
	}
	tr, err := o.trace.tracer(traceDevices([]string{o.dataDir}, o.devices), os.Stderr)
	if err != nil {
		closeDisks(d, os.Stderr)
		closeKnobs(knobs)
		return nil, nil, nil, err
	}
	log.Info("worker starting", "worker", o.name, "coordinator", o.conn.coordinator, "security", mode,
		"data_dir", o.dataDir, "allow_path", o.allow, "allow_binary", o.binaries, "allow_setting", o.settings,
		"allow_privileged", o.privileged, "allow_mysql", o.mysql, "max_job_memory", o.maxJobMemory.String(),
		"allow_host", allowHost.String(), "allow_disk", allowDisk.String(), "trace", traceSummary(tr))
	w, err := worker.New(worker.Config{Coordinator: o.conn.coordinator, Name: o.name, Labels: labels,
		DataDir: o.dataDir, Guard: g, Knobs: knobs, Version: version, DialOptions: dial, Telemetry: workerTelemetry([]string{o.dataDir}, o.devices, os.Stderr),
		Tracer: tr, Disks: d.workerDisks(), Log: log})
	if err != nil {
		closeDisks(d, os.Stderr)
		closeKnobs(knobs)
		return nil, nil, nil, err
	}
	return w, knobs, d, nil
}
