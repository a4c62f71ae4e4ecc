package powerloss

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Config starts a serving process.
type Config struct {
	Exe        string   // a binary with the powerloss-serve subcommand (os.Executable() for writepath)
	Args       []string // what precedes the flags; default {"powerloss-serve"}
	Env        []string // added to the environment (tests re-exec themselves with it)
	Backing    string   // directory with the durable state (e.g. a prepared datadir)
	Mountpoint string   // empty directory where the layer appears
	Work       string   // scratch dir on the backing file system; DefaultWorkDir(Backing) if empty
	Stderr     io.Writer
}

// Mounted is a live layer served by its own process. Point the program
// under test at Mountpoint; after Cut (or Close) the backing directory
// holds exactly what survived.
type Mounted struct {
	cfg    Config
	tmp    string // holds the control socket
	cmd    *exec.Cmd
	stderr *tail
	exited chan struct{} // closed when the process has been reaped
	wg     sync.WaitGroup

	once     sync.Once // guards Close
	closeErr error

	mu struct {
		sync.Mutex // serialises requests on conn
		conn       net.Conn
		rd         *bufio.Reader
		cut        bool
	}
}

// Mount starts `exe powerloss-serve` over backing at mountpoint and
// returns once the mount is live.
func Mount(ctx context.Context, exe, backing, mountpoint string) (*Mounted, error) {
	return MountConfig(ctx, Config{Exe: exe, Backing: backing, Mountpoint: mountpoint})
}

// MountConfig is Mount with every knob.
func MountConfig(ctx context.Context, cfg Config) (*Mounted, error) {
	if err := cfg.absolute(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "powerloss-")
	if err != nil {
		return nil, fmt.Errorf("control dir: %w", err)
	}
	m := &Mounted{cfg: cfg, tmp: tmp, stderr: &tail{max: 16 << 10}, exited: make(chan struct{})}
	if err := m.start(); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := m.connect(ctx); err != nil {
		return nil, errors.Join(err, m.Close())
	}
	return m, nil
}

func (c *Config) absolute() error {
	if c.Work == "" && c.Backing != "" {
		c.Work = DefaultWorkDir(c.Backing)
	}
	for _, p := range []*string{&c.Backing, &c.Mountpoint, &c.Work} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("path %s: %w", *p, err)
		}
		*p = abs
	}
	if len(c.Args) == 0 {
		c.Args = []string{"powerloss-serve"}
	}
	return nil
}

// Mountpoint is where the layer is mounted.
func (m *Mounted) Mountpoint() string { return m.cfg.Mountpoint }

// Backing is the directory that holds the durable state.
func (m *Mounted) Backing() string { return m.cfg.Backing }

func (m *Mounted) start() error {
	args := append(append([]string(nil), m.cfg.Args...),
		"--backing", m.cfg.Backing, "--mount", m.cfg.Mountpoint,
		"--control", m.socket(), "--work", m.cfg.Work)
	m.cmd = exec.Command(m.cfg.Exe, args...)
	m.cmd.Env = append(os.Environ(), m.cfg.Env...)
	m.cmd.Stdout = m.stderr
	m.cmd.Stderr = m.stderr
	if m.cfg.Stderr != nil {
		m.cmd.Stderr = io.MultiWriter(m.stderr, m.cfg.Stderr)
	}
	// Its own process group: a terminal's Ctrl-C reaches only us, and our
	// Close unmounts in order. If we die, the control connection closes
	// and the server unmounts by itself.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", m.cfg.Exe, err)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.cmd.Wait()
		close(m.exited)
	}()
	return nil
}

func (m *Mounted) socket() string { return filepath.Join(m.tmp, "control.sock") }

// connect dials the control socket until the server answers: it listens
// only once the mount is live.
func (m *Mounted) connect(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.Dial("unix", m.socket())
		if err == nil {
			m.mu.conn, m.mu.rd = conn, bufio.NewReader(conn)
			_, err = m.Stats(ctx)
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mount %s: %w%s", m.cfg.Mountpoint, ctx.Err(), m.stderr.suffix())
		case <-m.exited:
			return fmt.Errorf("mount %s: %w: %v%s", m.cfg.Mountpoint, ErrServerGone, m.cmd.ProcessState, m.stderr.suffix())
		case <-tick.C:
		}
	}
}

// call sends one request and reads its response, honouring ctx.
func (m *Mounted) call(ctx context.Context, req request) (response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.cut {
		return response{}, ErrCut
	}
	if m.mu.conn == nil {
		return response{}, ErrServerGone
	}
	m.mu.conn.SetDeadline(time.Time{}) // a cancelled earlier call may have set one
	stop := context.AfterFunc(ctx, func() { m.mu.conn.SetDeadline(time.Now()) })
	defer stop()
	line, err := json.Marshal(req)
	if err != nil {
		return response{}, fmt.Errorf("control %s: %w", req.Cmd, err)
	}
	var resp response
	if _, err = m.mu.conn.Write(append(line, '\n')); err == nil {
		var b []byte
		if b, err = m.mu.rd.ReadBytes('\n'); err == nil {
			err = json.Unmarshal(b, &resp)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return resp, fmt.Errorf("control %s: %w: %w%s", req.Cmd, ErrServerGone, err, m.stderr.suffix())
	}
	if !resp.OK {
		return resp, fmt.Errorf("control %s: %s", req.Cmd, resp.Error)
	}
	return resp, nil
}

// Stats returns the layer's current figures.
func (m *Mounted) Stats(ctx context.Context) (Stats, error) {
	resp, err := m.call(ctx, request{Cmd: "stats"})
	if err != nil || resp.Stats == nil {
		return Stats{}, err
	}
	return *resp.Stats, nil
}

// Sync makes everything written so far durable, like sync(1).
func (m *Mounted) Sync(ctx context.Context) error {
	_, err := m.call(ctx, request{Cmd: "sync"})
	return err
}

// Cut cuts the power: every non-durable write and namespace change is
// dropped (torn: a 4 KiB-aligned prefix of each un-synced write is kept;
// a zero Seed is replaced by a fresh one, reported), the file system is
// unmounted and the server exits. Stop the program using the mount first
// (kill -9), or the unmount is lazy and it sees errors. The backing
// directory then holds exactly what survived; start the program on it.
func (m *Mounted) Cut(ctx context.Context, opts CutOptions) (CutReport, error) {
	if opts.Torn && opts.Seed == 0 {
		opts.Seed = time.Now().UnixNano()
	}
	resp, err := m.call(ctx, request{Cmd: "cut", CutOptions: opts})
	m.mu.Lock()
	m.mu.cut = resp.Cut != nil
	m.mu.Unlock()
	var rep CutReport
	if resp.Cut != nil {
		rep = *resp.Cut
	}
	if err != nil {
		return rep, err
	}
	select { // the server exits right after answering
	case <-m.exited:
	case <-ctx.Done():
		return rep, fmt.Errorf("cut: wait for server: %w", ctx.Err())
	}
	return rep, nil
}
