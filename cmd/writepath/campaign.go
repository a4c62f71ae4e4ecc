package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/report"
)

// newCampaignCmd is `writepath campaign run|resume|list|show|cancel`.
func newCampaignCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "campaign",
		Short: "Run a matrix of settings x host groups x rounds and report one table",
		Long: "A campaign file (YAML) names a workload with its options, an optional managed server, a matrix of\n" +
			"server settings and workload options (--name), host groups (label selectors), rounds, the window\n" +
			"that counts and the baseline cell. See examples/ for the published experiments.",
	}
	cmd.AddCommand(newCampaignRunCmd(), newCampaignResumeCmd(), newCampaignListCmd(), newCampaignShowCmd(), newCampaignCancelCmd())
	return cmd
}

// openCampaigns opens where stored campaigns are read: a coordinator, or
// the store file.
func (o *sourceFlags) openCampaigns() (client.CampaignSource, error) {
	src, err := o.open()
	if err != nil {
		return nil, err
	}
	cs, ok := src.(client.CampaignSource)
	if !ok {
		src.Close()
		return nil, fmt.Errorf("%T cannot read campaigns", src) // both sources can: a programmer error
	}
	return cs, nil
}

func newCampaignListCmd() *cobra.Command {
	o := &sourceFlags{}
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List campaigns, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, err := o.openCampaigns()
			if err != nil {
				return err
			}
			defer src.Close()
			list, err := src.ListCampaigns(cmd.Context(), limit)
			if err != nil {
				return err
			}
			return client.WriteCampaigns(cmd.OutOrStdout(), list)
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().IntVar(&limit, "limit", 20, "how many campaigns (0: all)")
	return cmd
}

type campaignShowOptions struct {
	sourceFlags
	format string
	cols   columnsFlag
}

func (o *campaignShowOptions) Validate() error {
	_, err := report.ParseFormat(o.format)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	_, err = o.cols.columns()
	return err
}

func newCampaignShowCmd() *cobra.Command {
	o := &campaignShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a campaign's progress and result table",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			src, err := o.openCampaigns()
			if err != nil {
				return err
			}
			defer src.Close()
			rec, err := src.GetCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			f, _ := report.ParseFormat(o.format)
			if f == report.Text {
				client.WriteCampaignStatus(cmd.OutOrStdout(), rec)
			}
			cols, _ := o.cols.columns()
			return writeCampaignTable(cmd.Context(), cmd.OutOrStdout(), src, rec, f, cols)
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVar(&o.format, "format", "table", "table, markdown, csv or json")
	o.cols.AddFlags(cmd)
	return cmd
}

func newCampaignCancelCmd() *cobra.Command {
	o := &connFlags{}
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a running campaign and its runs in flight (resume continues it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.dial("campaign cancel: pass --coordinator ADDR (an embedded campaign stops with Ctrl-C)")
			if err != nil {
				return err
			}
			defer c.Close()
			rec, err := c.CancelCampaign(cmd.Context(), args[0], "cancelled from the command line")
			if err != nil {
				return err
			}
			client.WriteCampaignStatus(cmd.OutOrStdout(), rec)
			return nil
		},
	}
	o.AddFlags(cmd, "coordinator address")
	return cmd
}
