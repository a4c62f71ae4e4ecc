package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/auth"
)

type certsInitOptions struct {
	hosts   []string
	workers []string
	valid   time.Duration
}

func (o *certsInitOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&o.hosts, "host", nil, "coordinator host name or address for its certificate (repeatable; localhost and 127.0.0.1 are always included)")
	cmd.Flags().StringSliceVar(&o.workers, "worker", nil, "a worker name to issue a certificate for (repeatable): with mutual TLS a worker registers only under its certificate's name")
	cmd.Flags().DurationVar(&o.valid, "valid", 365*24*time.Hour, "certificate lifetime")
}

func newCertsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "certs", Short: "Create certificates for mutual TLS between coordinator, workers and CLI"}
	o := &certsInitOptions{}
	initCmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Create a CA, coordinator and client certificates, and one certificate per --worker NAME in DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := auth.InitCerts(args[0], o.hosts, o.workers, o.valid); err != nil {
				return err
			}
			dir := args[0]
			fmt.Fprintf(cmd.OutOrStdout(), "wrote CA and coordinator, client certificates to %s\n"+
				"coordinator: --tls-cert %s --tls-key %s --tls-ca %s\n",
				dir, auth.CertFile(dir, auth.RoleCoordinator), auth.KeyFile(dir, auth.RoleCoordinator), filepath.Join(dir, auth.Files.CA))
			printWorkers(cmd.OutOrStdout(), dir, o.workers)
			return nil
		},
	}
	o.AddFlags(initCmd)
	w := &certsInitOptions{}
	workerCmd := &cobra.Command{
		Use:   "worker DIR NAME...",
		Short: "Issue a certificate per worker NAME with the CA in DIR (ca.pem, ca-key.pem from certs init)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := auth.IssueWorkers(args[0], args[1:], w.valid); err != nil {
				return err
			}
			printWorkers(cmd.OutOrStdout(), args[0], args[1:])
			return nil
		},
	}
	workerCmd.Flags().DurationVar(&w.valid, "valid", 365*24*time.Hour, "certificate lifetime")
	cmd.AddCommand(initCmd, workerCmd)
	return cmd
}

func printWorkers(out io.Writer, dir string, names []string) {
	for _, n := range names {
		fmt.Fprintf(out, "worker %s: --name %s --tls-cert %s --tls-key %s --tls-ca %s\n",
			n, n, auth.WorkerCertFile(dir, n), auth.WorkerKeyFile(dir, n), filepath.Join(dir, auth.Files.CA))
	}
}
