package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
)

// Worker is one agent. Run it with Run; it returns when its context ends.
type Worker struct {
	cfg Config
}

// New checks cfg and returns a Worker.
func New(cfg Config) (*Worker, error) {
	if cfg.Coordinator == "" {
		return nil, errors.New("worker: no coordinator address")
	}
	if cfg.Name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("worker: no name and no hostname: %w", err)
		}
		cfg.Name = h
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	return &Worker{cfg: cfg.withDefaults()}, nil
}

// Name is the worker's name.
func (w *Worker) Name() string { return w.cfg.Name }

// Run connects and serves the coordinator until ctx ends, reconnecting with
// backoff whenever the stream breaks (coordinator restart, network cut). A
// bad address is not an error here: it is retried like a coordinator that
// is not up yet.
// Phases in flight when a stream breaks are cancelled: the coordinator has
// counted this worker lost for them.
func (w *Worker) Run(ctx context.Context) error {
	backoff := w.cfg.MinBackoff
	for {
		welcomed, err := w.dialSession(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if welcomed {
			backoff = w.cfg.MinBackoff
		}
		w.cfg.Log.Info("disconnected; reconnecting", "err", err, "in", backoff)
		if !sleep(ctx, jitter(backoff)) {
			return nil
		}
		backoff = min(2*backoff, w.cfg.MaxBackoff)
	}
}

// dialSession serves one session on a fresh connection: after a silent
// (cut) link, the old transport may look alive for minutes, so reusing it
// would only reach the black hole again.
func (w *Worker) dialSession(ctx context.Context) (bool, error) {
	opts := w.cfg.DialOptions
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(w.cfg.Coordinator, opts...)
	if err != nil {
		return false, fmt.Errorf("dial %s: %w", w.cfg.Coordinator, err)
	}
	defer conn.Close()
	return w.session(ctx, writepathv1.NewWorkerServiceClient(conn))
}

// jitter spreads reconnects of many workers over [d/2, d).
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// hello describes this worker and every kind linked into it.
func (w *Worker) hello() *writepathv1.Hello {
	h := &writepathv1.Hello{Name: w.cfg.Name, Host: w.cfg.Host, Labels: w.cfg.Labels,
		Version: w.cfg.Version, Capabilities: []string{"intervals", "telemetry"}}
	for _, m := range workload.Kinds() {
		k := &writepathv1.KindInfo{Kind: m.Kind, Name: m.Name}
		for _, p := range m.Phases {
			pl := writepathv1.Placement_PLACEMENT_ALL
			if p.Placement == workload.One {
				pl = writepathv1.Placement_PLACEMENT_ONE
			}
			k.Phases = append(k.Phases, &writepathv1.PhaseInfo{Name: p.Name, Placement: pl, Measured: p.Measured,
				OnRequest: p.OnRequest})
		}
		h.Kinds = append(h.Kinds, k)
	}
	return h
}
