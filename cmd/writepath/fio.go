package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/workload/fio"
)

// newFioCmd is `writepath fio <fio args...>`: fio's own options, flags and
// job files, run locally and directly (no fabric). Arguments go untouched
// to the fio package, so fio's syntax (--name=x --rw=randwrite ..., job
// files, --output-format, --output, --version, --help, --cmdhelp) works as
// pasted.
func newFioCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "fio [fio options] [job files]",
		Short:              "Run fio jobs (fio's options, job files and output formats) locally",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := fio.RunCommand(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr(), version)
			// jobs that failed were reported as fio reports them; exit
			// with fio's status and add nothing
			if n, ok := errors.AsType[fio.JobsFailed](err); ok {
				return exitCode(n)
			}
			return err
		},
	}
}
