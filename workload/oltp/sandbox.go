package oltp

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/writepath/writepath/mysqld"
)

// Sandbox table defaults: small enough to prepare in a couple of seconds.
const (
	sandboxTables    = "--tables=4"
	sandboxTableSize = "--table-size=10000"
)

// Sandbox is the kind's local-mode setup (Meta.Local): with no --mysql-* flag (and no
// --mysqld-dir: a managed server the kind starts itself) it starts
// a throw-away server from the installed mariadbd/mysqld in a temporary
// datadir and points the workload at it (root over the Unix socket). The
// cleanup stops the server and removes the directory; the caller runs it
// however the run ends, Ctrl-C included.
func Sandbox(ctx context.Context, args []string, out io.Writer) ([]string, func(), error) {
	if hasOption(args, "--mysql-") || hasOption(args, "--mysqld-dir") {
		return args, func() {}, nil
	}
	bin, err := mysqld.FindBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("oltp sandbox: no --mysql-* flag given and %w", err)
	}
	dir, err := os.MkdirTemp("", "wp-")
	if err != nil {
		return nil, nil, fmt.Errorf("oltp sandbox: %w", err)
	}
	// The server's account must enter it (MkdirTemp makes it 0700); what
	// is inside is that account's or 0600.
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("oltp sandbox: %w", err)
	}
	inst, err := mysqld.New(ctx, mysqld.Options{Binary: bin, Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("oltp sandbox: %w", err)
	}
	cleanup := func() {
		_ = inst.Close()
		_ = os.RemoveAll(dir)
	}
	fmt.Fprintf(out, "oltp sandbox: starting %s in %s (no --mysql-* flag given; removed at exit)\n", inst.Version(), dir)
	if err := inst.Init(ctx); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("oltp sandbox: %w", err)
	}
	if err := inst.Start(ctx); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("oltp sandbox: %w", err)
	}
	// The password travels as the file that holds it: the spec (and the
	// store) never carries it.
	newArgs := append(append([]string(nil), args...),
		"--mysql-socket="+inst.Socket(), "--mysql-user="+inst.User(), "--mysql-password-file="+inst.PasswordFile(), "--mysql-db=sbtest")
	if !hasOption(args, "--tables") {
		newArgs = append(newArgs, sandboxTables)
	}
	if !hasOption(args, "--table-size") && !hasOption(args, "--table_size") {
		newArgs = append(newArgs, sandboxTableSize)
	}
	return newArgs, cleanup, nil
}

// hasOption reports whether any argument starts with prefix (either
// spelling of sysbench's dashes and underscores).
func hasOption(args []string, prefix string) bool {
	alt := strings.ReplaceAll(prefix, "-", "_")
	alt = "--" + strings.TrimPrefix(alt, "__")
	for _, a := range args {
		if strings.HasPrefix(a, prefix) || strings.HasPrefix(a, alt) {
			return true
		}
	}
	return false
}
