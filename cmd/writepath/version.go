package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/workload"
)

// version is the release; set with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the workload kinds linked in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			rev := ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				rev = bi.GoVersion
			}
			fmt.Fprintf(out, "writepath %s (%s)\n", version, rev)
			for _, m := range workload.Kinds() {
				fmt.Fprintf(out, "  kind %-6s %s\n", m.Name, m.Description)
			}
			return nil
		},
	}
}
