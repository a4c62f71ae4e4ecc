package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/writepath/writepath/mysqld"
)

// mysqldOptions are the flags of `writepath mysqld ...`.
type mysqldOptions struct {
	dir, binary  string
	port         int
	listen       string
	set          []string
	startTimeout time.Duration
}

func (o *mysqldOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "instance directory (datadir, my.cnf, error log)")
	f.StringVar(&o.binary, "binary", "", "server binary (default: mariadbd or mysqld on PATH or in /usr/sbin)")
	f.IntVar(&o.port, "port", 0, "TCP port, with --listen (default: the recorded one, else a free one)")
	f.StringVar(&o.listen, "listen", "", "also listen for TCP on this address, e.g. 127.0.0.1 (default: the recorded one, else the Unix socket only)")
	f.StringArrayVar(&o.set, "set", nil, "my.cnf [mysqld] override key=value (repeatable; replaces the recorded set)")
	f.DurationVar(&o.startTimeout, "start-timeout", mysqld.DefaultStartTimeout, "how long start waits for the server to answer")
}

func (o *mysqldOptions) Validate() error {
	if o.dir == "" {
		return errors.New("--dir is required (the instance directory, e.g. --dir ./db1)")
	}
	for _, s := range o.set {
		if _, err := mysqld.ParseSetting(s); err != nil {
			return fmt.Errorf("--set: %w", err)
		}
	}
	return nil
}

// open finds or creates the instance in --dir, detached so that a started
// server outlives this command.
func (o *mysqldOptions) open(ctx context.Context) (*mysqld.Instance, error) {
	opts := mysqld.Options{Dir: o.dir, Binary: o.binary, Port: o.port, Listen: o.listen, Detach: true, StartTimeout: o.startTimeout}
	if o.set != nil {
		opts.Settings = []mysqld.Setting{}
		for _, s := range o.set {
			st, _ := mysqld.ParseSetting(s) // validated
			opts.Settings = append(opts.Settings, st)
		}
	}
	return mysqld.Open(ctx, opts)
}

func newMysqldCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mysqld",
		Short: "Manage a local MySQL/MariaDB instance (init, start, stop, status)",
	}
	cmd.AddCommand(
		mysqldSub("init", "Initialise an empty datadir (root's password is set at the first start, kept in DIR/root.password)", func(ctx context.Context, in *mysqld.Instance, w io.Writer) error {
			if err := in.Init(ctx); err != nil {
				return err
			}
			fmt.Fprintf(w, "initialised %s (%s) in %s\n", in.DataDir(), in.Version(), in.Dir())
			return nil
		}),
		mysqldSub("start", "Start the server and wait until it answers", func(ctx context.Context, in *mysqld.Instance, w io.Writer) error {
			if err := in.Start(ctx); err != nil {
				return err
			}
			return printStatus(in, w)
		}),
		mysqldSub("stop", "Stop the server gracefully (SIGKILL after the stop timeout)", func(ctx context.Context, in *mysqld.Instance, w io.Writer) error {
			if err := in.Stop(ctx); err != nil {
				return err
			}
			fmt.Fprintf(w, "stopped %s\n", in.Dir())
			return nil
		}),
		mysqldSub("status", "Print whether the server runs, with its pid, socket and port", func(_ context.Context, in *mysqld.Instance, w io.Writer) error {
			return printStatus(in, w)
		}),
	)
	return cmd
}

func mysqldSub(use, short string, run func(context.Context, *mysqld.Instance, io.Writer) error) *cobra.Command {
	o := &mysqldOptions{}
	cmd := &cobra.Command{
		Use:   use + " --dir DIR [--binary PATH] [--set key=value ...]",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			in, err := o.open(cmd.Context())
			if err != nil {
				return err
			}
			return run(cmd.Context(), in, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func printStatus(in *mysqld.Instance, w io.Writer) error {
	state := "stopped"
	if pid := in.PID(); pid != 0 {
		state = fmt.Sprintf("running (pid %d)", pid)
	}
	var set []string
	for _, s := range in.Settings() {
		set = append(set, s.String())
	}
	tcp := "off (Unix socket only; --listen ADDR turns it on)"
	if a := in.Addr(); a != "" {
		tcp = a
	}
	runAs := in.ServerUser()
	if runAs == "" {
		runAs = "(this user)"
	}
	fmt.Fprintf(w, "%s: %s\n  server:  %s (%s)\n  socket:  %s\n  tcp:     %s\n  user:    root, password in %s (mode 0600)\n  runs as: %s\n  datadir: %s\n  log:     %s\n  set:     %s\n",
		in.Dir(), state, in.Binary(), in.Version(), in.Socket(), tcp, in.PasswordFile(), runAs, in.DataDir(), in.ErrorLogPath(), strings.Join(set, " "))
	return nil
}
