package main

import (
	"github.com/spf13/cobra"

	_ "github.com/writepath/writepath/workload/all" // every workload kind
)

// newRootCmd is the command table. Each command group lives in its own file
// as newXCmd; this function only lists them.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "writepath",
		Short:         "Load-test fabric for the database write path",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newVersionCmd(),
		newCoordinatorCmd(), newWorkerCmd(), newRunCmd(), newRunsCmd(), newWorkersCmd(), newCancelCmd(),
		newAdviseCmd(),
		newMysqldCmd(),
		newCrashCmd(), newDiskCmd(),
		newFioCmd(), newSysbenchCmd(),
		newCertsCmd(),
		newPowerlossServeCmd(),
		newReportCmd(),
		newCampaignCmd(), newQuickstartCmd(),
	)
	return root
}
