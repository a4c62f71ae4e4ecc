package mysqld

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Init creates an empty datadir: MySQL with --initialize-insecure, MariaDB
// with mariadb-install-db; either way root@localhost has no password. It
// fails with ErrRunning on a running instance and does nothing on an
// initialized one.
func (in *Instance) Init(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.runningLocked() {
		return fmt.Errorf("init mysqld %s: %w", in.dir, ErrRunning)
	}
	if in.Initialized() {
		return nil
	}
	if err := in.writeCnf(false); err != nil {
		return fmt.Errorf("init mysqld %s: %w", in.dir, err)
	}
	in.pwApplied = false // a fresh datadir: root has no password yet
	if err := in.saveState(0); err != nil {
		return fmt.Errorf("init mysqld %s: %w", in.dir, err)
	}
	cmd, err := in.initCommand(ctx)
	if err != nil {
		return fmt.Errorf("init mysqld %s: %w", in.dir, err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("init mysqld %s: %s: %w\n%s%s", in.dir, cmd.Path, err, lastLines(string(out), 20), in.tailSince(0, 20))
	}
	return nil
}

func (in *Instance) initCommand(ctx context.Context) (*exec.Cmd, error) {
	cnf := "--defaults-file=" + in.CnfPath()
	bin, err := in.checkExec(in.binary)
	if err != nil {
		return nil, err
	}
	if in.version.Flavor == MySQL {
		return exec.CommandContext(ctx, bin, cnf, "--initialize-insecure"), nil
	}
	tool, err := installDB(bin, in.exec == nil)
	if err != nil {
		return nil, err
	}
	args := []string{cnf, "--datadir=" + in.DataDir(), "--auth-root-authentication-method=normal",
		"--skip-test-db"}
	if os.Geteuid() == 0 {
		u, err := in.serverUserLocked()
		if err != nil {
			return nil, err
		}
		args = append(args, "--user="+u.name)
	}
	return exec.CommandContext(ctx, tool, args...), nil
}

// Start writes my.cnf and starts the server, waiting (bounded by the start
// timeout) until it accepts connections. On failure the server is killed
// and the error carries the tail of the error log written by this start.
func (in *Instance) Start(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.startLocked(ctx)
}

func (in *Instance) startLocked(ctx context.Context) error {
	if in.runningLocked() {
		return fmt.Errorf("start mysqld %s: %w", in.dir, ErrRunning)
	}
	if !in.Initialized() {
		return fmt.Errorf("start mysqld %s: %w", in.dir, ErrNotInitialized)
	}
	secure := !in.pwApplied
	if secure {
		if err := in.writeInitFileLocked(); err != nil {
			return fmt.Errorf("start mysqld %s: %w", in.dir, err)
		}
		defer os.Remove(in.initFile()) // the password stays in root.password only
	}
	if err := in.writeCnf(secure); err != nil {
		return fmt.Errorf("start mysqld %s: %w", in.dir, err)
	}
	_ = os.Remove(in.socket) // a stale socket from a killed server
	bin, err := in.checkExec(in.binary)
	if err != nil {
		return fmt.Errorf("start mysqld %s: %w", in.dir, err)
	}
	from := in.ErrorLogSize()
	cmd := exec.Command(bin, "--defaults-file="+in.CnfPath())
	cmd.Dir = in.dir
	p, err := spawn(cmd, in.detach)
	if err != nil {
		return fmt.Errorf("start mysqld %s: %w", in.dir, err)
	}
	in.proc = p
	if err := in.waitReady(ctx, p, in.startTO); err != nil {
		_ = p.signal(syscall.SIGKILL)
		_ = p.wait(context.Background())
		in.proc = nil
		return fmt.Errorf("start mysqld %s: %w; error log %s:\n%s", in.dir, err, in.ErrorLogPath(), in.tailSince(from, 30))
	}
	if secure {
		// Ready means the init file ran: the server aborts its start on an
		// init-file error.
		in.pwApplied = true
		if err := in.writeCnf(false); err != nil { // the next start needs no init file
			return fmt.Errorf("start mysqld %s: %w", in.dir, err)
		}
	}
	return in.saveState(p.pid)
}

// Stop shuts the server down gracefully (SIGTERM), and kills it when it
// has not exited within the stop timeout or when ctx is done first.
// Stopping a stopped instance is not an error.
func (in *Instance) Stop(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stopLocked(ctx)
}

func (in *Instance) stopLocked(ctx context.Context) error {
	p := in.procLocked()
	if p == nil {
		return nil
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop mysqld %s: %w", in.dir, err)
	}
	wctx, cancel := context.WithTimeout(ctx, in.stopTO)
	defer cancel()
	if err := p.wait(wctx); err != nil {
		_ = p.signal(syscall.SIGKILL)
		_ = p.wait(context.Background())
		in.proc = nil
		return fmt.Errorf("stop mysqld %s: killed after %w", in.dir, err)
	}
	in.proc = nil
	return in.saveState(0)
}

// Kill sends SIGKILL, as a crash would, and waits for the process to end.
func (in *Instance) Kill() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.procLocked()
	if p == nil {
		return fmt.Errorf("kill mysqld %s: %w", in.dir, ErrNotRunning)
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill mysqld %s: %w", in.dir, err)
	}
	_ = p.wait(context.Background())
	in.proc = nil
	return nil
}

// Restart stops the server (if running) and starts it again with the
// current settings.
func (in *Instance) Restart(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.stopLocked(ctx); err != nil {
		return err
	}
	return in.startLocked(ctx)
}

// Close stops the server if this Instance runs it and removes a temporary
// socket directory. It is idempotent and safe to defer right after New. A
// detached instance (Options.Detach) is left running: it is meant to
// outlive this process.
func (in *Instance) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.detach {
		return nil
	}
	err := in.stopLocked(context.Background())
	if in.tmpSock != "" {
		_ = os.RemoveAll(in.tmpSock)
		in.tmpSock = ""
	}
	return err
}

// Running reports whether the server process is alive.
func (in *Instance) Running() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.runningLocked()
}

func (in *Instance) runningLocked() bool { return in.procLocked() != nil }

// procLocked returns the live process, clearing a dead one.
func (in *Instance) procLocked() *process {
	if in.proc != nil && !in.proc.alive() {
		in.proc = nil
	}
	return in.proc
}

// PID is the server's process id, 0 when it is not running.
func (in *Instance) PID() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if p := in.procLocked(); p != nil {
		return p.pid
	}
	return 0
}

// Exited returns a channel that is closed when the server process started
// by this Instance ends (crash, kill, stop); already closed when it is not
// running. For a server adopted by Open (not our child) it is nil: poll
// Running instead.
func (in *Instance) Exited() <-chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	if p := in.procLocked(); p != nil {
		return p.exited()
	}
	return closedChan
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
