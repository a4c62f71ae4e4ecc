package powerloss

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// ServeConfig says what to serve. Paths may be relative.
type ServeConfig struct {
	Backing    string // directory holding the durable state
	Mountpoint string // empty directory to mount on
	Control    string // unix socket path for the control channel
	Work       string // scratch directory on the backing file system; DefaultWorkDir if empty
	Debug      bool   // log every FUSE request
}

// Validate reports every problem of cfg at once, on one line.
func (c ServeConfig) Validate() error {
	var bad []string
	for _, p := range [][2]string{{"--backing", c.Backing}, {"--mount", c.Mountpoint}, {"--control", c.Control}} {
		if p[1] == "" {
			bad = append(bad, p[0]+" is required")
		}
	}
	for _, p := range [][2]string{{"--backing", c.Backing}, {"--mount", c.Mountpoint}} {
		if p[1] == "" {
			continue
		}
		if st, err := os.Stat(p[1]); err != nil || !st.IsDir() {
			bad = append(bad, fmt.Sprintf("%s %s is not a directory", p[0], p[1]))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(bad, "; "), ErrBadLayout)
	}
	return nil
}

// Serve mounts the layer and serves its control channel until the
// controlling client cuts the power, asks to unmount, hangs up, or ctx
// ends. It never returns with the mount still in place: on every path but
// a cut the cache is first synced to the backing directory (a clean
// shutdown), then the file system is unmounted, lazily if it is busy.
func Serve(ctx context.Context, cfg ServeConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s, err := start(cfg)
	if err != nil {
		return err
	}
	defer s.shutdown()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.wg.Add(1)
	go func() { // ends when the kernel unmounts us, by whatever means
		defer s.wg.Done()
		s.fuse.Wait()
		if !s.unmounting.Load() { // unmounted from outside: stop serving
			cancel()
		}
	}()
	conn, err := s.accept(ctx)
	if err != nil || conn == nil { // nil: ctx ended first
		return err
	}
	defer conn.Close()
	return s.serveConn(ctx, conn)
}

// server is one mounted layer and its control listener.
type server struct {
	cfg   ServeConfig
	work  workDir
	layer *Layer
	fuse  *fuse.Server
	ln    net.Listener
	wg    sync.WaitGroup // the fuse.Wait watcher

	unmounting atomic.Bool // our own unmount started
	once       sync.Once   // guards the unmount
	lazy       bool        // the unmount had to be lazy
	unmountErr error
}

func start(cfg ServeConfig) (*server, error) {
	s := &server{cfg: cfg}
	var err error
	for _, p := range []*string{&cfg.Backing, &cfg.Mountpoint, &cfg.Control} {
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, fmt.Errorf("path %s: %w", *p, err)
		}
	}
	if cfg.Work == "" {
		cfg.Work = DefaultWorkDir(cfg.Backing)
	}
	if cfg.Work, err = filepath.Abs(cfg.Work); err != nil {
		return nil, fmt.Errorf("path %s: %w", cfg.Work, err)
	}
	s.cfg = cfg
	if err := checkPaths(cfg.Backing, cfg.Work, cfg.Mountpoint); err != nil {
		return nil, err
	}
	unix.Umask(0) // the kernel applied the caller's umask already
	if s.work, err = prepareWorkDir(cfg.Backing, cfg.Work); err != nil {
		removeWorkDir(cfg.Work)
		return nil, err
	}
	s.layer = newLayer(s.work)
	if err := s.mount(); err != nil {
		removeWorkDir(cfg.Work)
		return nil, err
	}
	os.Remove(cfg.Control)
	if s.ln, err = net.Listen("unix", cfg.Control); err != nil {
		s.shutdown()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return s, nil
}

func (s *server) mount() error {
	lb, err := fs.NewLoopbackRoot(s.work.view)
	if err != nil {
		return fmt.Errorf("loopback %s: %w", s.work.view, err)
	}
	root := &node{LoopbackNode: lb.(*fs.LoopbackNode), l: s.layer}
	root.RootData.RootNode = root
	var st unix.Stat_t
	if err := unix.Stat(s.work.view, &st); err != nil {
		return fmt.Errorf("stat %s: %w", s.work.view, err)
	}
	sec := time.Second
	opts := &fs.Options{
		// The root gets its view inode number like every other directory
		// (go-fuse leaves it 0), so the journal can name it.
		RootStableAttr: &fs.StableAttr{Ino: st.Ino, Gen: 1},
		AttrTimeout:    &sec,
		EntryTimeout:   &sec,
		MountOptions: fuse.MountOptions{
			FsName:     "powerloss",
			Name:       "powerloss",
			AllowOther: os.Getuid() == 0, // mysqld may run as another user
			Options:    []string{"default_permissions"},
			Debug:      s.cfg.Debug,
		},
	}
	if s.fuse, err = fs.Mount(s.cfg.Mountpoint, root, opts); err != nil {
		return fmt.Errorf("mount %s: %w", s.cfg.Mountpoint, err)
	}
	return nil
}

// accept waits for the controlling client. Its connection is a lease:
// when it closes, the server shuts down.
func (s *server) accept(ctx context.Context) (net.Conn, error) {
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	conn, err := s.ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("control accept: %w", err)
	}
	return conn, nil
}

// unmount syncs everything unless the power was cut, then unmounts; a busy
// mount is unmounted lazily and its connection aborted. Idempotent.
func (s *server) unmount() error {
	s.once.Do(func() {
		s.unmounting.Store(true)
		var errs []error
		if !s.layer.isCut.Load() {
			errs = append(errs, s.layer.SyncAll())
			s.layer.isCut.Store(true) // nothing more may change now
		}
		s.lazy, s.unmountErr = unmountFUSE(s.fuse, s.cfg.Mountpoint)
		errs = append(errs, s.unmountErr)
		s.layer.closeFiles()
		errs = append(errs, removeWorkDir(s.work.root))
		s.unmountErr = errors.Join(errs...)
	})
	return s.unmountErr
}

func (s *server) shutdown() {
	if err := s.unmount(); err != nil {
		fmt.Fprintln(os.Stderr, "powerloss:", err)
	}
	if s.ln != nil {
		s.ln.Close()
		os.Remove(s.cfg.Control)
	}
	waitTimeout(&s.wg, 2*time.Second)
}

// waitTimeout waits for wg, but not forever: after a lazy unmount that
// could not abort the connection, the kernel may keep it until the last
// user lets go, and the process exit ends it then.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
