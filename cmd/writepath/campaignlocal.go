package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/diskprofile"
	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/internal/echo"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
)

// localCampaignFlags describe the embedded fabric a campaign runs on when
// no --coordinator is given.
type localCampaignFlags struct {
	workers  int
	labels   []string
	db       string
	dataDir  string
	interval time.Duration
	// allowHost is --allow-host: the host knobs the embedded workers may
	// change for the campaign's runs.
	allowHost []string
	// allowDisk is --allow-disk: what the campaign's disk profiles may
	// throttle (loop, device paths, all).
	allowDisk []string
	allow     embeddedGuardFlags
}

func (o *localCampaignFlags) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&o.workers, "local-workers", 0, "embedded fabric: how many workers (default one per host group, labelled for it)")
	f.StringArrayVar(&o.labels, "local-label", nil, "embedded fabric: label worker I (from 0) with KEY=VALUE, as I:KEY=VALUE (repeatable)")
	f.StringVar(&o.db, "db", "writepath.db", "embedded fabric: the store file")
	f.StringVar(&o.dataDir, "data-dir", ".", "embedded fabric: the workers' data directory")
	f.DurationVar(&o.interval, "interval", 0, "reporting interval (default the coordinator's, 1s)")
	f.StringSliceVar(&o.allowHost, "allow-host", nil, "embedded fabric: host knobs the spec's runs may set (scheduler,nr_requests,...; all); needs root")
	f.StringSliceVar(&o.allowDisk, "allow-disk", nil, "embedded fabric: what the spec's disk profiles may throttle (loop: loop filesystems in the data dir; device paths; all); needs root")
	o.allow.addFlagSet(f)
}

func (o *localCampaignFlags) Validate() error {
	if o.workers < 0 {
		return fmt.Errorf("--local-workers %d: want 0 (one per group) or more", o.workers)
	}
	if len(o.labels) > 0 && o.workers == 0 {
		return fmt.Errorf("--local-label needs --local-workers N")
	}
	if o.interval != 0 && o.interval < 10*time.Millisecond {
		return fmt.Errorf("--interval %v: want at least 10ms", o.interval)
	}
	if _, err := hostknob.ParseAllow(o.allowHost); err != nil {
		return err
	}
	if _, err := diskprofile.ParseAllow(o.allowDisk); err != nil {
		return err
	}
	_, err := o.explicitLabels()
	return err
}

// knobs opens the embedded workers' host knobs: what --allow-host names,
// which must cover every knob the spec sets.
func (o *localCampaignFlags) knobs(spec *campaign.Spec, stderr io.Writer) (*hostknob.Host, *disks, error) {
	allow, _ := hostknob.ParseAllow(o.allowHost) // checked by Validate
	var refused []string
	for _, c := range spec.Expand() {
		for _, h := range c.Host {
			if n, err := hostknob.Canonical(h.Key); err == nil && !allow.Allows(n) && !slices.Contains(refused, n) {
				refused = append(refused, n)
			}
		}
	}
	if len(refused) > 0 {
		return nil, nil, fmt.Errorf("campaign %s sets host knobs %s: add --allow-host %s (or all) to let the embedded workers change them (as root)",
			spec.Name, strings.Join(refused, ", "), strings.Join(refused, ","))
	}
	allowDisk, _ := diskprofile.ParseAllow(o.allowDisk) // checked by Validate
	if spec.UsesDisk() && allowDisk.Empty() {
		return nil, nil, fmt.Errorf("campaign %s has disk profiles: add --allow-disk loop (or the devices it names, or all) to let the embedded workers throttle them (as root)", spec.Name)
	}
	return openHostChanges(o.dataDir, allow, allowDisk, "--allow-host/--allow-disk", knobsLog(stderr))
}

// explicitLabels parses --local-label I:KEY=VALUE into labels per worker.
func (o *localCampaignFlags) explicitLabels() ([]map[string]string, error) {
	out := make([]map[string]string, o.workers)
	for i := range out {
		out[i] = map[string]string{}
	}
	for _, l := range o.labels {
		idx, kv, ok := strings.Cut(l, ":")
		i, err := strconv.Atoi(idx)
		k, v, okKV := strings.Cut(kv, "=")
		if !ok || !okKV || k == "" || err != nil || i < 0 || i >= o.workers {
			return nil, fmt.Errorf("--local-label %s: want I:KEY=VALUE with 0 <= I < --local-workers (%d)", echo.Quote(l), o.workers)
		}
		out[i][k] = v
	}
	return out, nil
}

// workerLabels are the embedded workers' labels: explicit, or one worker
// per group carrying the group's selector (so the group selects exactly
// it) and group=NAME. A "name" selector cannot be a label; such a group
// needs --local-workers and a coordinator naming.
func (o *localCampaignFlags) workerLabels(spec *campaign.Spec) ([]map[string]string, error) {
	if o.workers > 0 {
		return o.explicitLabels()
	}
	var out []map[string]string
	for _, g := range spec.Groups {
		l := map[string]string{"group": g.Name}
		for k, v := range g.Selector {
			if k == "name" {
				return nil, fmt.Errorf("group %s selects workers by name: give --local-workers N (local workers are worker-1..N)", g.Name)
			}
			l[k] = v
		}
		out = append(out, l)
	}
	return out, nil
}

// start runs the embedded fabric with labelled workers.
func (o *localCampaignFlags) start(spec *campaign.Spec, plans []*writepathv1.CampaignPlan, stderr io.Writer) (*client.Client, func(), error) {
	labels, err := o.workerLabels(spec)
	if err != nil {
		return nil, nil, err
	}
	var specs []*anypb.Any
	for _, p := range plans {
		for _, r := range p.GetRuns() {
			specs = append(specs, r.GetSpec().GetSpec())
		}
	}
	g, err := embeddedGuard(o.dataDir, o.allow, specs)
	if err != nil {
		return nil, nil, err
	}
	knobs, d, err := o.knobs(spec, stderr)
	if err != nil {
		return nil, nil, err
	}
	f, err := local.Start(local.Config{DBPath: o.db,
		Coordinator: coordinator.Config{KeepWorkerIntervals: coordinator.DefaultKeepWorkerIntervals},
		Worker: worker.Config{DataDir: o.dataDir, Guard: g, Version: version, Progress: io.Discard, Knobs: knobs,
			Telemetry: workerTelemetry([]string{o.dataDir}, nil, stderr), Disks: d.workerDisks()}})
	if err != nil {
		closeDisks(d, stderr)
		closeKnobs(knobs)
		return nil, nil, fmt.Errorf("embedded fabric: %w", err)
	}
	stop := func() { f.Close(); closeDisks(d, stderr); closeKnobs(knobs) }
	for _, l := range labels {
		name, err := f.AddWorker(l)
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("embedded fabric: %w", err)
		}
		fmt.Fprintf(stderr, "local worker %s: %s\n", name, labelText(l))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitWorkers(ctx, len(labels)); err != nil {
		stop()
		return nil, nil, fmt.Errorf("embedded fabric: %w", err)
	}
	return client.New(f.Control()), stop, nil
}

// setup prepares what the workload needs locally before its specs are
// built (the kind's Meta.Local: oltp's sandbox server when no --mysql-*
// option or managed server is named), whose extra options are added to
// every cell.
func (o *localCampaignFlags) setup(ctx context.Context, spec *campaign.Spec, stderr io.Writer) ([]string, func(), error) {
	meta, ok := workload.ByName(spec.Workload)
	if !ok || meta.Local == nil {
		return nil, func() {}, nil
	}
	args, cleanup, err := meta.Local(ctx, spec.Options, stderr)
	if err != nil {
		return nil, nil, err
	}
	return args[len(spec.Options):], cleanup, nil
}

// storedSpec reads a campaign's spec and plan from the store file, to
// label and guard the workers of a resumed embedded campaign as before.
func (o *localCampaignFlags) storedSpec(ctx context.Context, id string) (*campaign.Spec, *writepathv1.CampaignPlan, error) {
	f, err := client.OpenFile(o.db)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rec, err := f.GetCampaign(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if rec.GetPlan().GetSpecText() == "" {
		return nil, nil, fmt.Errorf("campaign %s: %w", id, errNoSpec)
	}
	spec, err := campaign.Parse(rec.GetPlan().GetSpecFile(), []byte(rec.GetPlan().GetSpecText()))
	return spec, rec.GetPlan(), err
}

func labelText(l map[string]string) string {
	var kv []string
	for k, v := range l {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}
