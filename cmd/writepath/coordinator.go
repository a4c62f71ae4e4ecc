package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/writepath/writepath/auth"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/metrics"
)

type coordinatorOptions struct {
	listen  string
	db      string
	metrics string
	sec     serveFlags
	cfg     coordinator.Config
}

func (o *coordinatorOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:7470", "address to serve workers and clients on")
	f.StringVar(&o.db, "db", "writepath.db", "bbolt file keeping runs and intervals")
	f.DurationVar(&o.cfg.HeartbeatInterval, "heartbeat-interval", coordinator.DefaultHeartbeatInterval, "how often workers are pinged")
	f.DurationVar(&o.cfg.HeartbeatTimeout, "heartbeat-timeout", coordinator.DefaultHeartbeatTimeout, "silence after which a worker is lost")
	f.DurationVar(&o.cfg.Interval, "interval", coordinator.DefaultInterval, "default reporting interval of runs")
	f.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9470)")
	o.sec.AddFlags(f)
	f.DurationVar(&o.cfg.MergeWait, "merge-wait", 0, "how long a merge waits for late workers past an interval's end (default max(interval, heartbeat timeout))")
	f.IntVar(&o.cfg.MaxWorkers, "max-workers", coordinator.DefaultMaxWorkers, "workers connected at once; more are refused naming this limit")
	f.IntVar(&o.cfg.KeepWorkerIntervals, "keep-worker-intervals", coordinator.DefaultKeepWorkerIntervals, "after each run, keep per-worker interval snapshots of only the N newest ended runs (merged intervals and each worker's phase totals are always kept; 0: keep all)")
}

func (o *coordinatorOptions) Validate() error {
	if o.listen == "" || o.db == "" {
		return fmt.Errorf("--listen and --db are required")
	}
	if o.cfg.HeartbeatTimeout <= o.cfg.HeartbeatInterval {
		return fmt.Errorf("--heartbeat-timeout %v must exceed --heartbeat-interval %v", o.cfg.HeartbeatTimeout, o.cfg.HeartbeatInterval)
	}
	if o.cfg.MaxWorkers < 1 {
		return fmt.Errorf("--max-workers=%d: want at least 1", o.cfg.MaxWorkers)
	}
	if o.cfg.KeepWorkerIntervals < 0 {
		return fmt.Errorf("--keep-worker-intervals=%d: want 0 (keep all) or more", o.cfg.KeepWorkerIntervals)
	}
	return o.sec.Validate()
}

// newCoordinatorCmd is `writepath coordinator --listen ADDR --db FILE`.
func newCoordinatorCmd() *cobra.Command {
	o := &coordinatorOptions{}
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Serve the fabric: register workers, run and merge runs, keep results",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.serve(cmd.Context())
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// softMemoryLimit is the Go heap's soft limit for a coordinator started
// without GOMEMLIMIT, under its 512 MiB budget with room for stacks and
// the store's mapped pages: past it the collector runs more often instead
// of letting a burst's garbage double the heap. A 1,000-worker fleet's
// coordinator peaked at 403 MiB without it (bench/fleet.sh), so the
// collector works harder only near the budget.
const softMemoryLimit = 448 << 20

// serve runs the coordinator (and its metrics endpoint) until ctx ends.
func (o *coordinatorOptions) serve(ctx context.Context) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	o.cfg.Log = log
	srv, err := o.sec.server(log)
	if err != nil {
		return err
	}
	// With mutual TLS a worker may register only under its certificate's
	// name.
	o.cfg.WorkerIdentity = auth.WorkerNames
	lis, err := srv.Listen(o.listen)
	if err != nil {
		return err
	}
	exp := metrics.New()
	opts := append(lis.Options(), grpc.StatsHandler(exp.StatsHandler()))
	if o.metrics != "" {
		ml, err := net.Listen("tcp", o.metrics)
		if err != nil {
			lis.Close()
			return fmt.Errorf("--metrics %s: %w", o.metrics, err)
		}
		log.Info("metrics serving", "url", "http://"+ml.Addr().String()+"/metrics")
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- exp.Serve(mctx, ml) }() // owned: waited for below
		defer func() {
			cancel()
			if err := <-done; err != nil {
				log.Warn("metrics", "err", err)
			}
		}()
	}
	log.Info("coordinator serving", "addr", lis.Addr().String(), "db", o.db, "security", srv.Mode())
	return coordinator.ServeWith(ctx, lis, o.db, o.cfg, exp.Attach, opts...)
}
