package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// columnsFlag is --columns: the telemetry columns of a campaign table,
// replacing the spec's `columns:` ("" keeps them, "none" drops them).
type columnsFlag struct{ value string }

func (c *columnsFlag) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.value, "columns", "", "telemetry columns per cell and group, replacing the spec's columns: a comma list of "+
		"iostat -x columns (w/s, wkB/s, wrqm/s, w_await, aqu-sz, %util, ...) and InnoDB figures (log_waits/s, dirty, ckpt_age, redo_MB/s, ...), or none")
}

// columns returns the chosen columns, nil to keep the spec's.
func (c *columnsFlag) columns() ([]string, error) {
	if c.value == "" {
		return nil, nil
	}
	cols, err := client.ParseColumns(c.value)
	if err != nil {
		return nil, fmt.Errorf("--columns: %w", err)
	}
	return cols, nil
}

// campaignTable builds a campaign's table with what its kind declares
// (its columns, unit and figures: a crash campaign's recovery columns)
// and the telemetry columns chosen.
func campaignTable(ctx context.Context, src client.CampaignSource, rec *writepathv1.Campaign, cols []string) (*client.CampaignResult, error) {
	o := client.TableOptions{Columns: cols, Kind: kindOf(campaignKind(rec))}
	return client.BuildCampaignTableWith(ctx, src, rec, o)
}

// campaignKind is the workload a campaign's stored spec names ("" when it
// does not parse: BuildCampaignTableWith says why).
func campaignKind(rec *writepathv1.Campaign) string {
	spec, err := campaign.Parse(rec.GetPlan().GetSpecFile(), []byte(rec.GetPlan().GetSpecText()))
	if err != nil {
		return ""
	}
	return spec.Workload
}
