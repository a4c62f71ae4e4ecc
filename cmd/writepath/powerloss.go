package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/writepath/writepath/powerloss"
)

// powerlossServeOptions are the flags of the hidden powerloss-serve command,
// which powerloss.Mount starts as its own process.
type powerlossServeOptions struct {
	cfg powerloss.ServeConfig
}

func (o *powerlossServeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.cfg.Backing, "backing", "", "directory holding the durable state")
	fs.StringVar(&o.cfg.Mountpoint, "mount", "", "empty directory to mount the layer on")
	fs.StringVar(&o.cfg.Control, "control", "", "unix socket for the control channel")
	fs.StringVar(&o.cfg.Work, "work", "", "scratch directory on the backing file system (default: hidden sibling of --backing)")
	fs.BoolVar(&o.cfg.Debug, "debug", false, "log every FUSE request")
}

func newPowerlossServeCmd() *cobra.Command {
	o := &powerlossServeOptions{}
	cmd := &cobra.Command{
		Use:    powerloss.ServeCommand,
		Short:  "Serve a power-loss FUSE layer (started by the crash harness)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return powerloss.Serve(cmd.Context(), o.cfg)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
