package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/coordinator/store"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/transport"
	"github.com/writepath/writepath/worker"
)

// Config describes an embedded fabric.
type Config struct {
	// Workers is how many workers to start (named worker-1 ...).
	Workers int
	// DBPath is the store file.
	DBPath string
	// Coordinator tunes the coordinator.
	Coordinator coordinator.Config
	// Worker is the template for every worker; Name and Coordinator are
	// filled in per worker. DataDir defaults to the current directory.
	Worker worker.Config
	// Listener, if set, is served instead of the private socket (tests
	// pass a bufconn listener), with DialOptions to reach it.
	Listener    net.Listener
	DialOptions []grpc.DialOption
	Log         *slog.Logger
	// CheckOnClose runs bbolt's consistency check once everything writing
	// has stopped, and Close reports what it finds (tests set it).
	CheckOnClose bool
}

// Fabric is a running embedded fabric.
type Fabric struct {
	cfg    Config
	store  *store.Store
	coord  *coordinator.Coordinator
	server *grpc.Server
	lis    net.Listener
	priv   *transport.Private // the private socket, unless Config.Listener
	conn   *grpc.ClientConn

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // server and worker goroutines

	closeOnce sync.Once
	mu        struct {
		sync.Mutex
		workers map[string]context.CancelFunc
		next    int
	}
}

// Start opens the store, serves a coordinator and starts cfg.Workers
// workers. Close it however the caller ends.
func Start(cfg Config) (f *Fabric, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	f = &Fabric{cfg: cfg}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.mu.workers = map[string]context.CancelFunc{}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if f.store, err = store.Open(cfg.DBPath); err != nil {
		return nil, err
	}
	cfg.Coordinator.Log = cfg.Log.With("role", "coordinator")
	if f.coord, err = coordinator.New(cfg.Coordinator, f.store); err != nil {
		return nil, err
	}
	if err := f.serve(); err != nil {
		return nil, err
	}
	for range cfg.Workers {
		if _, err := f.AddWorker(nil); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// serve serves the coordinator on the private socket (transport.Private:
// only this process, with its token, can call it) or on Config.Listener.
func (f *Fabric) serve() error {
	opts := transport.Server{}.Options()
	f.lis = f.cfg.Listener
	if f.lis == nil {
		p, err := transport.ListenPrivate(f.cfg.Log)
		if err != nil {
			return fmt.Errorf("local coordinator: %w", err)
		}
		f.priv, f.lis, opts = p, p.Listener(), p.ServerOptions()
	}
	f.server = grpc.NewServer(opts...)
	f.coord.Register(f.server)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := f.server.Serve(f.lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			f.cfg.Log.Error("serve", "err", err)
		}
	}()
	conn, err := grpc.NewClient(f.Target(), f.DialOptions()...)
	if err != nil {
		return fmt.Errorf("local control client: %w", err)
	}
	f.conn = conn
	return nil
}

// Target is the gRPC target of the embedded coordinator.
func (f *Fabric) Target() string {
	if f.priv != nil {
		return f.priv.Target()
	}
	return "passthrough:///" + f.lis.Addr().String()
}

// DialOptions reach the embedded coordinator: the private socket's token
// (only this process has it), or Config.DialOptions.
func (f *Fabric) DialOptions() []grpc.DialOption {
	if f.priv != nil {
		return f.priv.DialOptions()
	}
	return f.cfg.DialOptions
}

// Addr is the coordinator's address: the private socket's path.
func (f *Fabric) Addr() string { return f.lis.Addr().String() }

// Control is a ControlService client of the embedded coordinator.
func (f *Fabric) Control() writepathv1.ControlServiceClient {
	return writepathv1.NewControlServiceClient(f.conn)
}

// Conn is the client connection to the embedded coordinator.
func (f *Fabric) Conn() *grpc.ClientConn { return f.conn }

// Coordinator is the embedded coordinator.
func (f *Fabric) Coordinator() *coordinator.Coordinator { return f.coord }

// Store is the embedded coordinator's store.
func (f *Fabric) Store() *store.Store { return f.store }

// AddWorker starts one more worker; labels are added to the template's.
// It returns the worker's name.
func (f *Fabric) AddWorker(labels map[string]string) (string, error) {
	f.mu.Lock()
	f.mu.next++
	cfg := f.cfg.Worker
	cfg.Name = fmt.Sprintf("worker-%d", f.mu.next)
	f.mu.Unlock()
	cfg.Coordinator = f.Target()
	cfg.DialOptions = f.DialOptions()
	cfg.Labels = mergeLabels(f.cfg.Worker.Labels, labels)
	if cfg.Log == nil {
		cfg.Log = f.cfg.Log
	}
	w, err := worker.New(cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(f.ctx)
	f.mu.Lock()
	f.mu.workers[cfg.Name] = cancel
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		w.Run(ctx)
	}()
	return cfg.Name, nil
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// StopWorker ends one worker, as a killed process would: its stream closes
// and its phases stop.
func (f *Fabric) StopWorker(name string) bool {
	f.mu.Lock()
	cancel, ok := f.mu.workers[name]
	delete(f.mu.workers, name)
	f.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// WaitWorkers waits until n workers are connected.
func (f *Fabric) WaitWorkers(ctx context.Context, n int) error {
	for {
		ws, err := f.coord.Workers()
		if err != nil {
			return err
		}
		connected := 0
		for _, w := range ws {
			if w.GetConnected() {
				connected++
			}
		}
		if connected >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d workers connected: %w", connected, n, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Close stops the workers, the coordinator (runs in flight become
// interrupted), the server and the store. Safe to call more than once.
func (f *Fabric) Close() error {
	var err error
	f.closeOnce.Do(func() {
		// The coordinator first, so runs in flight are stored interrupted
		// rather than partial from workers vanishing under them.
		if f.coord != nil {
			f.coord.Close()
		}
		f.cancel()
		if f.server != nil {
			f.server.Stop()
		}
		f.wg.Wait()
		if f.conn != nil {
			f.conn.Close()
		}
		if f.priv != nil {
			err = f.priv.Close()
		}
		if f.store != nil {
			if f.cfg.CheckOnClose {
				err = errors.Join(err, f.store.Check())
			}
			err = errors.Join(err, f.store.Close())
		}
	})
	return err
}
