package mysqld

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// process is a running server: either our child (done closes when Wait
// returns) or a server found by pid (Open), which is polled.
type process struct {
	pid  int
	done chan struct{} // nil for a server that is not our child
	err  error         // Wait's result; read after done is closed
}

// spawn starts cmd. An attached child is started (and waited for) from a
// goroutine locked to its OS thread: Linux delivers the parent-death signal
// when the thread that forked exits, so that thread must live exactly as
// long as the child.
func spawn(cmd *exec.Cmd, detach bool) (*process, error) {
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		p := &process{pid: cmd.Process.Pid, done: make(chan struct{})}
		go func() { p.err = cmd.Wait(); close(p.done) }()
		return p, nil
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	started := make(chan error, 1)
	p := &process{done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread dies with this goroutine, after the child.
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// alive reports whether the process still runs.
func (p *process) alive() bool {
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	return pidAlive(p.pid)
}

// pidAlive reports whether pid names a live, non-zombie process.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// Field 3 (after "pid (comm)") is the state; Z is a zombie.
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return stat[i+2] != 'Z'
		}
	}
	return true
}

// signal sends sig to the server.
func (p *process) signal(sig syscall.Signal) error {
	if err := syscall.Kill(p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to pid %d: %w", sig, p.pid, err)
	}
	return nil
}

// wait blocks until the process is gone or ctx is done.
func (p *process) wait(ctx context.Context) error {
	if p.done != nil {
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for pidAlive(p.pid) {
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// exited returns a channel closed when the process ends (nil when it is
// not our child and cannot be waited for).
func (p *process) exited() <-chan struct{} { return p.done }
