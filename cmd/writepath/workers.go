package main

import (
	"github.com/spf13/cobra"

	"github.com/writepath/writepath/client"
)

// newWorkersCmd is `writepath workers --coordinator ADDR`.
func newWorkersCmd() *cobra.Command {
	o := &connFlags{}
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "List a coordinator's workers: connected, labels, kinds, clock offset",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.dial("--coordinator is required (an embedded fabric has no standing workers)")
			if err != nil {
				return err
			}
			defer c.Close()
			ws, err := c.Workers(cmd.Context())
			if err != nil {
				return err
			}
			return client.WriteWorkers(cmd.OutOrStdout(), ws)
		},
	}
	o.AddFlags(cmd, "coordinator address (host:port)")
	return cmd
}
