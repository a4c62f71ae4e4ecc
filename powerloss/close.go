package powerloss

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Close ends the session and always leaves no mount behind. Without a
// prior Cut it is a clean shutdown: the server syncs everything to the
// backing directory and unmounts. If the server is stuck it is killed; if
// it crashed, what it left in the backing directory is the durable state
// at that moment (as a cut without torn writes). Then any mount left at
// the mountpoint is unmounted (lazily if busy) and the work directory is
// removed. Safe to call more than once.
func (m *Mounted) Close() error {
	m.once.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Mounted) close() error {
	var errs []error
	errs = append(errs, m.stop())
	errs = append(errs, m.reap(10*time.Second))
	if ok, err := mountedAt(m.cfg.Mountpoint); err != nil || ok {
		errs = append(errs, err, forceUnmount(m.cfg.Mountpoint))
	}
	if err := removeWorkDir(m.cfg.Work); err != nil && !errors.Is(err, ErrBadLayout) {
		errs = append(errs, err)
	}
	errs = append(errs, os.RemoveAll(m.tmp))
	return errors.Join(errs...)
}

// stop asks the server to sync and unmount: over the control channel, or,
// if it never got one (Mount failed half-way), with SIGTERM.
func (m *Mounted) stop() error {
	m.mu.Lock()
	conn := m.mu.conn
	m.mu.Unlock()
	if conn == nil {
		m.cmd.Process.Signal(syscall.SIGTERM)
		return nil
	}
	err := m.unmountRequest()
	conn.Close() // the lease: the server shuts down without it anyway
	if errors.Is(err, ErrCut) {
		return nil
	}
	return err
}

func (m *Mounted) unmountRequest() error {
	select {
	case <-m.exited:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := m.call(ctx, request{Cmd: "unmount"})
	return err
}

// reap waits for the server to exit, killing it after d. A failure exit
// status is an error (with the server's last words); death by a signal is
// not: whoever sent it knows.
func (m *Mounted) reap(d time.Duration) error {
	select {
	case <-m.exited:
	case <-time.After(d):
		m.cmd.Process.Kill()
		<-m.exited
	}
	m.wg.Wait()
	if code := m.cmd.ProcessState.ExitCode(); code > 0 {
		return fmt.Errorf("powerloss server exited with status %d%s", code, m.stderr.suffix())
	}
	return nil
}

func mountedAt(mountpoint string) (bool, error) {
	_, ok, err := mountInfo(mountpoint)
	return ok, err
}

// forceUnmount removes a mount left by a server that died.
func forceUnmount(mountpoint string) error {
	if err := lazyUnmount(mountpoint); err != nil {
		return fmt.Errorf("unmount leftover %s: %w", mountpoint, err)
	}
	return nil
}

// tail keeps the last max bytes written to it (the server's stderr).
type tail struct {
	max int
	mu  struct {
		sync.Mutex
		buf []byte
	}
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.buf = append(t.mu.buf, p...)
	if over := len(t.mu.buf) - t.max; over > 0 {
		t.mu.buf = append([]byte(nil), t.mu.buf[over:]...)
	}
	return len(p), nil
}

// suffix formats the tail for an error message.
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.mu.buf))
	if s == "" {
		return ""
	}
	return "; server said: " + s
}
