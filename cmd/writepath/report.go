package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/runview"
)

type reportOptions struct {
	sourceFlags
	out  string
	cols columnsFlag // a campaign's telemetry columns
}

func (o *reportOptions) AddFlags(cmd *cobra.Command) {
	o.sourceFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.out, "output", "o", "report.html", "HTML file to write")
	o.cols.AddFlags(cmd)
}

// newReportCmd is `writepath report RUN|CAMPAIGN -o report.html`; a
// campaign id starts with "c-" (reportcampaign.go).
func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RUN|CAMPAIGN",
		Short: "Write a self-contained HTML report of a stored run (latency, rates, iostat -x, InnoDB) or campaign",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args[0])
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func (o *reportOptions) run(cmd *cobra.Command, id string) error {
	if isCampaignID(id) {
		if err := o.reportCampaign(cmd.Context(), id); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", o.out)
		return nil
	}
	src, err := o.open()
	if err != nil {
		return err
	}
	defer src.Close()
	detail, err := results.Read(cmd.Context(), src, id, results.PerWorker)
	if err != nil {
		return err
	}
	r, err := runview.Run(detail)
	if err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	r.Timeline = runTimeline(detail.Record)
	f, err := os.Create(o.out)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := report.WriteRunHTML(f, r); err != nil {
		f.Close()
		return fmt.Errorf("report %s: %w", o.out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report %s: %w", o.out, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", o.out)
	return nil
}
