package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/auth"
)

type certsInitOptions struct {
	hosts []string
	valid time.Duration
}

func (o *certsInitOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&o.hosts, "host", nil, "coordinator host name or address for its certificate (repeatable; localhost and 127.0.0.1 are always included)")
	cmd.Flags().DurationVar(&o.valid, "valid", 365*24*time.Hour, "certificate lifetime")
}

func newCertsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "certs", Short: "Create certificates for mutual TLS between coordinator, workers and CLI"}
	o := &certsInitOptions{}
	initCmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Create a CA and coordinator, worker and client certificates in DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := auth.InitCerts(args[0], o.hosts, o.valid); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote CA and coordinator, worker, client certificates to %s\n"+
				"coordinator: --tls-cert %[2]s --tls-key %[3]s --tls-ca %[4]s\n",
				args[0], auth.CertFile(args[0], auth.RoleCoordinator), auth.KeyFile(args[0], auth.RoleCoordinator), args[0]+"/"+auth.Files.CA)
			return nil
		},
	}
	o.AddFlags(initCmd)
	cmd.AddCommand(initCmd)
	return cmd
}
