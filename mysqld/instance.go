package mysqld

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Defaults for Options.
const (
	// DefaultStartTimeout bounds the wait for a starting server. Crash
	// recovery of a large redo log can take minutes; raise it for those.
	DefaultStartTimeout = 120 * time.Second
	// DefaultStopTimeout bounds a graceful shutdown before SIGKILL.
	DefaultStopTimeout = 120 * time.Second
	// maxSunPath is the usable length of a Unix socket path on Linux
	// (sun_path is 108 bytes including the terminating NUL).
	maxSunPath = 107
)

// Options describe an instance.
type Options struct {
	// Binary is the server executable; empty finds mariadbd or mysqld.
	Binary string
	// Dir is the instance directory; it is created if missing.
	Dir string
	// Port is the TCP port, used only with Listen; 0 picks a free one.
	Port int
	// Listen is the address the server listens on for TCP ("127.0.0.1",
	// or another when the load generator runs elsewhere); empty listens on
	// the Unix socket only (skip-networking).
	Listen string
	// Socket is the Unix socket path; empty puts it in DIR/run (mode 0700,
	// the server's account's) when the path is short enough, else in a
	// short private temporary directory.
	Socket string
	// Settings override the base my.cnf, in order (later wins).
	Settings []Setting
	// StartTimeout and StopTimeout default to DefaultStartTimeout and
	// DefaultStopTimeout.
	StartTimeout, StopTimeout time.Duration
	// Detach starts the server in its own session without a parent-death
	// signal, so that it outlives this process (the mysqld CLI command).
	Detach bool
	// Exec, if set, checks the server binary where it is executed: before
	// `--version` in New and before every start, with the binary the
	// instance actually runs (the recorded one of instance.json when
	// Binary is empty). It returns the path to execute (a worker's guard
	// resolves it) or why not.
	Exec func(binary string) (string, error)
}

// Instance is one managed server. Its methods are safe for concurrent use;
// lifecycle calls (Start, Stop, Kill, Restart) are serialised.
type Instance struct {
	binary  string
	exec    func(string) (string, error) // Options.Exec; nil runs binary as is
	dir     string
	port    int
	listen  string
	socket  string
	version Version
	detach  bool
	startTO time.Duration
	stopTO  time.Duration

	mu       sync.Mutex // serialises lifecycle calls and protects the fields below
	settings []Setting
	// pwApplied says the datadir's root accounts have the password of
	// DIR/root.password (false after Init and Restore: the next start
	// sets it).
	pwApplied bool
	proc      *process // nil when not started by this Instance (or stopped)
	tmpSock   string   // short temp dir holding the socket, removed by Close
}

// New prepares an instance in opts.Dir without starting anything: it
// detects the binary's flavor and version and chooses port and socket.
func New(ctx context.Context, opts Options) (*Instance, error) {
	return newInstance(ctx, opts, state{})
}

// newInstance is New carrying what an earlier instance.json recorded.
func newInstance(ctx context.Context, opts Options, st state) (*Instance, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("new mysqld instance: no directory given")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("new mysqld instance %s: %w", opts.Dir, err)
	}
	if opts.Binary == "" {
		if opts.Binary, err = FindBinary(); err != nil {
			return nil, err
		}
	}
	bin := opts.Binary
	if opts.Exec != nil {
		if bin, err = opts.Exec(opts.Binary); err != nil {
			return nil, fmt.Errorf("new mysqld instance %s: %w", dir, err)
		}
	}
	v, err := Detect(ctx, bin)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("new mysqld instance %s: %w", dir, err)
	}
	in := &Instance{binary: bin, exec: opts.Exec, dir: dir, port: opts.Port, listen: opts.Listen, socket: opts.Socket, pwApplied: st.PasswordApplied,
		version: v, detach: opts.Detach, settings: append([]Setting(nil), opts.Settings...),
		startTO: orDefault(opts.StartTimeout, DefaultStartTimeout),
		stopTO:  orDefault(opts.StopTimeout, DefaultStopTimeout)}
	if in.port == 0 {
		if in.port, err = FreePort(); err != nil {
			return nil, fmt.Errorf("new mysqld instance %s: %w", dir, err)
		}
	}
	if in.socket == "" {
		if err := in.chooseSocket(); err != nil {
			return nil, err
		}
	}
	return in, in.saveState(0)
}

// checkExec passes bin through Options.Exec, if any.
func (in *Instance) checkExec(bin string) (string, error) {
	if in.exec == nil {
		return bin, nil
	}
	return in.exec(bin)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// chooseSocket puts the socket in DIR/run when it fits sun_path, else in
// a fresh short private directory under the temp dir
// ("/tmp/wp-123/mysqld.sock").
func (in *Instance) chooseSocket() error {
	if p := filepath.Join(in.RunDir(), "mysqld.sock"); len(p) <= maxSunPath {
		in.socket = p
		return nil
	}
	tmp, err := os.MkdirTemp("", "wp-")
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	in.tmpSock = tmp
	in.socket = filepath.Join(tmp, "mysqld.sock")
	return nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago
// (bind :0, read the port, close).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Binary is the server executable.
func (in *Instance) Binary() string { return in.binary }

// Version is the detected flavor and version.
func (in *Instance) Version() Version { return in.version }

// Dir is the instance directory.
func (in *Instance) Dir() string { return in.dir }

// DataDir is the server's datadir (DIR/data).
func (in *Instance) DataDir() string { return filepath.Join(in.dir, "data") }

// CnfPath is the generated my.cnf.
func (in *Instance) CnfPath() string { return filepath.Join(in.dir, "my.cnf") }

// TmpDir is the server's tmpdir (DIR/tmp).
func (in *Instance) TmpDir() string { return filepath.Join(in.dir, "tmp") }

// RunDir is DIR/run: mode 0700, the server's account's; it holds the
// socket (when the path fits), the pid file and the one-shot init file.
func (in *Instance) RunDir() string { return filepath.Join(in.dir, "run") }

// PIDFile is the server's pid file.
func (in *Instance) PIDFile() string { return PIDFileIn(in.dir) }

// PIDFileIn is the pid file of the instance in dir.
func PIDFileIn(dir string) string { return filepath.Join(dir, "run", "mysqld.pid") }

// ErrorLogPath is the server's error log.
func (in *Instance) ErrorLogPath() string { return filepath.Join(in.dir, "error.log") }

// Port is the TCP port (the server listens on it only with Listen).
func (in *Instance) Port() int { return in.port }

// Listen is the TCP address the server listens on, "" for none.
func (in *Instance) Listen() string { return in.listen }

// Addr is "LISTEN:PORT", "" when the server does not listen on TCP.
func (in *Instance) Addr() string {
	if in.listen == "" {
		return ""
	}
	return net.JoinHostPort(in.listen, strconv.Itoa(in.port))
}

// Socket is the Unix socket path.
func (in *Instance) Socket() string { return in.socket }

// User is the account clients connect as: root, with Password.
func (in *Instance) User() string { return "root" }

// Settings returns the current my.cnf overrides.
func (in *Instance) Settings() []Setting {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Setting(nil), in.settings...)
}

// SetSettings replaces the overrides; they take effect at the next start.
func (in *Instance) SetSettings(s []Setting) {
	in.mu.Lock()
	in.settings = append([]Setting(nil), s...)
	in.mu.Unlock()
}

// Initialized reports whether the datadir holds a system database.
func (in *Instance) Initialized() bool {
	_, err := os.Stat(filepath.Join(in.DataDir(), "mysql"))
	return err == nil
}
