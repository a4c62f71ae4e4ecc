package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newCancelCmd is `writepath cancel ID --coordinator ADDR`.
func newCancelCmd() *cobra.Command {
	o := &connFlags{}
	var reason string
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a run on every worker",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.dial("--coordinator is required")
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.Cancel(cmd.Context(), args[0], reason); err != nil {
				return err
			}
			run, err := c.Watch(cmd.Context(), args[0], nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "run %s: %s\n", run.GetId(), run.GetState())
			return nil
		},
	}
	o.AddFlags(cmd, "coordinator address (host:port)")
	cmd.Flags().StringVar(&reason, "reason", "cancelled from the command line", "recorded with the run")
	return cmd
}
