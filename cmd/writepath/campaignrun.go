package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload"
)

// campaignRunOptions are the flags of `campaign run` and `campaign resume`.
type campaignRunOptions struct {
	conn   connFlags
	local  localCampaignFlags
	format string
	html   string
	cols   columnsFlag
}

func (o *campaignRunOptions) AddFlags(cmd *cobra.Command) {
	o.conn.AddFlags(cmd, "coordinator address; without it, run an embedded fabric")
	o.local.AddFlags(cmd)
	cmd.Flags().StringVar(&o.format, "format", "table", "result table format: table, markdown, csv or json")
	cmd.Flags().StringVarP(&o.html, "output", "o", "", "also write the HTML report to this file")
	o.cols.AddFlags(cmd)
}

func (o *campaignRunOptions) Validate() error {
	if _, err := report.ParseFormat(o.format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if _, err := o.cols.columns(); err != nil {
		return err
	}
	if o.conn.coordinator != "" && len(o.local.allowHost) > 0 {
		return errors.New("--allow-host is for the embedded fabric; the workers of --coordinator allow host knobs with worker --allow-host")
	}
	return o.local.Validate()
}

func newCampaignRunCmd() *cobra.Command {
	o := &campaignRunOptions{}
	cmd := &cobra.Command{
		Use:   "run SPEC",
		Short: "Expand a campaign file and run every cell x group x round, then print the result table",
		Long: "Runs on --coordinator's workers, or on an embedded fabric. Embedded, each host group gets one\n" +
			"local worker labelled with the group's selector and group=NAME (or give --local-workers N and\n" +
			"--local-label I:KEY=VALUE). Progress is stored: `writepath campaign resume ID` continues after a\n" +
			"restart without redoing completed runs. Exit status: 0 finished, 1 otherwise.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func newCampaignResumeCmd() *cobra.Command {
	o := &campaignRunOptions{}
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Continue a stopped campaign: completed runs are kept, the rest run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.resume(cmd.Context(), args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// run parses and plans the campaign, submits it and follows it.
func (o *campaignRunOptions) run(ctx context.Context, path string, stdout, stderr io.Writer) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("campaign spec: %w", err)
	}
	spec, err := campaign.Parser{Workloads: kindNames()}.Parse(path, text)
	if err != nil {
		return err
	}
	var extra []string
	if o.conn.coordinator == "" {
		args, cleanup, err := o.local.setup(ctx, spec, stderr)
		if err != nil {
			return err
		}
		defer cleanup()
		extra = args
	}
	plan, err := client.Plan(spec, buildKindSpec(spec.Workload), client.PlanOptions{File: path, Text: text,
		Interval: o.local.interval, Extra: extra, HostName: checkHostName, Disk: diskSpec, Kind: kindOf(spec.Workload)})
	if err != nil {
		return err
	}
	c, closeFabric, err := o.connect(spec, plan, stderr)
	if err != nil {
		return err
	}
	defer closeFabric()
	rec, err := c.SubmitCampaign(ctx, plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "campaign %s: %d runs (%d cells x %d groups x %d rounds), window %s\n", rec.GetId(),
		len(plan.GetRuns()), len(spec.Expand()), len(spec.Groups), spec.Rounds, spec.Window)
	return o.follow(ctx, c, rec.GetId(), stdout, stderr)
}

// resume restarts a stored campaign and follows it.
func (o *campaignRunOptions) resume(ctx context.Context, id string, stdout, stderr io.Writer) error {
	var spec *campaign.Spec
	var plan *writepathv1.CampaignPlan
	if o.conn.coordinator == "" {
		s, p, err := o.local.storedSpec(ctx, id)
		if err != nil {
			return err
		}
		spec, plan = s, p
	}
	c, closeFabric, err := o.connect(spec, plan, stderr)
	if err != nil {
		return err
	}
	defer closeFabric()
	if _, err := c.ResumeCampaign(ctx, id); err != nil {
		return err
	}
	return o.follow(ctx, c, id, stdout, stderr)
}

func (o *campaignRunOptions) connect(spec *campaign.Spec, plan *writepathv1.CampaignPlan, stderr io.Writer) (*client.Client, func(), error) {
	if o.conn.coordinator == "" {
		return o.local.start(spec, []*writepathv1.CampaignPlan{plan}, stderr)
	}
	c, err := o.conn.dial("--coordinator is required")
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Close() }, nil
}

// follow prints progress until the campaign stops, then the table.
func (o *campaignRunOptions) follow(ctx context.Context, c *client.Client, id string, stdout, stderr io.Writer) error {
	p := &client.CampaignPrinter{W: stderr}
	rec, err := c.WatchCampaign(ctx, id, p.Change)
	if ctx.Err() != nil {
		if o.conn.coordinator != "" {
			fmt.Fprintf(stderr, "stopped watching; campaign %s goes on at the coordinator (`writepath campaign show %s`)\n", id, id)
		} else {
			fmt.Fprintf(stderr, "campaign %s interrupted; continue it with `writepath campaign resume %s`\n", id, id)
		}
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	f, _ := report.ParseFormat(o.format)
	cols, _ := o.cols.columns()
	fmt.Fprintln(stdout)
	if err := writeCampaignTable(context.WithoutCancel(ctx), stdout, c, rec, f, cols); err != nil {
		return err
	}
	if o.html != "" {
		if err := writeCampaignReport(context.WithoutCancel(ctx), c, rec, o.html, cols); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "report written to %s\n", o.html)
	}
	if rec.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		client.WriteCampaignStatus(stderr, rec)
		return exitCode(1)
	}
	return nil
}

// writeCampaignTable aggregates a campaign's stored intervals and prints
// the table (a campaign still running shows the rounds done so far).
func writeCampaignTable(ctx context.Context, w io.Writer, src client.CampaignSource, rec *writepathv1.Campaign, f report.Format, cols []string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := campaignTable(ctx, src, rec, cols)
	if err != nil {
		return err
	}
	if err := report.WriteCampaignTable(w, res.Table, res.Unit, f); err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// buildKindSpec builds a kind's spec from its arguments (the CLI links
// every kind); decoding it too makes a bad cell fail before submit.
func buildKindSpec(kind string) client.SpecBuilder {
	return func(args []string) (*anypb.Any, error) {
		meta, ok := workload.ByName(kind)
		if !ok || meta.FromArgs == nil {
			return nil, fmt.Errorf("kind %s is not linked or takes no options", kind)
		}
		if err := refuseStoredSecrets(meta.Secrets, args); err != nil {
			return nil, err
		}
		b, err := meta.FromArgs(args)
		if err != nil {
			return nil, err
		}
		if _, err := meta.New(b); err != nil {
			return nil, err
		}
		return &anypb.Any{TypeUrl: meta.Kind, Value: b}, nil
	}
}

var errNoSpec = errors.New("campaign has no stored spec")
