package powerloss

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ServeCommand is the subcommand name Mount runs: `exe powerloss-serve
// --backing DIR --mount DIR --control SOCKET [--work DIR]`.
const ServeCommand = "powerloss-serve"

// ServeMain runs the serving side from its command line (the flags after
// ServeCommand) until the session ends, and returns the exit status. It is
// for binaries that are not writepath itself: a test binary whose TestMain
// sees os.Args[1] == ServeCommand calls it, so that Mount(os.Executable())
// works in tests exactly as in the CLI, with no environment to pass.
func ServeMain(args []string, stderr io.Writer) int {
	var cfg ServeConfig
	fs := flag.NewFlagSet(ServeCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Backing, "backing", "", "directory holding the durable state")
	fs.StringVar(&cfg.Mountpoint, "mount", "", "empty directory to mount the layer on")
	fs.StringVar(&cfg.Control, "control", "", "unix socket for the control channel")
	fs.StringVar(&cfg.Work, "work", "", "scratch directory on the backing file system")
	fs.BoolVar(&cfg.Debug, "debug", false, "log every FUSE request")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// SIGTERM and SIGINT are a clean shutdown (sync, unmount), as in the CLI.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, cfg); err != nil {
		fmt.Fprintln(stderr, ServeCommand+":", err)
		return 1
	}
	return 0
}
