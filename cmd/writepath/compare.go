package main

import (
	"github.com/spf13/cobra"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/results"
)

// newRunsCompareCmd is `writepath runs compare A B`.
func newRunsCompareCmd() *cobra.Command {
	o := &sourceFlags{}
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Show two runs side by side: per operation rate and p50/p99/p99.9, MB/s, and B's change against A",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := o.open()
			if err != nil {
				return err
			}
			defer src.Close()
			var sums [2]*client.Summary
			for i, id := range args {
				detail, err := results.Read(cmd.Context(), src, id, results.PerWorker)
				if err != nil {
					return err
				}
				if sums[i], err = client.Summarize(detail, kindOf(detail.Record.GetKindName())); err != nil {
					return err
				}
			}
			return client.WriteComparison(cmd.OutOrStdout(), sums[0], sums[1], client.Compare(sums[0], sums[1]))
		},
	}
	o.AddFlags(cmd)
	return cmd
}
