package worker

import (
	"io"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/workload"
)

// Defaults for Config's zero fields.
const (
	DefaultMinBackoff = 200 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
	// DefaultSilence is how long the worker waits without hearing from the
	// coordinator before it reconnects, until a Welcome says otherwise.
	DefaultSilence = 10 * time.Second
)

// Config describes a worker.
type Config struct {
	// Coordinator is the address to dial ("host:port", or any gRPC target).
	Coordinator string
	// Name identifies the worker; it must be unique among the coordinator's.
	Name string
	// Host and Labels are advertised for selection ("disk=nvme").
	Host   string
	Labels map[string]string
	// DataDir is the root for relative paths in specs.
	DataDir string
	// Guard, if not nil, is handed to every workload (workload.Env.Guard)
	// and checks a spec's paths, binaries and sizes when it is validated
	// and assigned, before any I/O (kinds implementing workload.Checker).
	Guard workload.Guard
	// Knobs, if set, applies runs' host knobs (within its operator's
	// allow-list) around each phase; nil refuses any run with host knobs.
	// Workers of one process may share one.
	Knobs *hostknob.Host
	// Version is advertised in the Hello.
	Version string
	// DialOptions are added to the gRPC dial (credentials, bufconn dialer);
	// without any, the connection is insecure.
	DialOptions []grpc.DialOption
	// MinBackoff and MaxBackoff bound the reconnect delay, which doubles
	// from Min to Max with jitter and resets once a session is welcomed.
	MinBackoff, MaxBackoff time.Duration
	// Disks, if set, applies runs' disk profiles around their phases; a
	// run with a profile on a worker without it is refused.
	Disks Disks
	// Telemetry, if set, is sampled at each interval boundary.
	Telemetry Telemetry
	// Tracer, if set, traces the kernel during measured phases; its series
	// become extra ops of each interval.
	Tracer Tracer
	// Log receives progress; nil discards.
	Log *slog.Logger
	// Progress, if set, is handed to workloads for progress bars.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(DefaultMaxBackoff, c.MinBackoff)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	c.Log = c.Log.With("worker", c.Name)
	return c
}

// env is the Env a workload gets on this worker, before the phase's shard
// and start are known.
func (c Config) env() workload.Env {
	return workload.Env{DataDir: c.DataDir, Guard: c.Guard, Log: c.Log, Progress: c.Progress, Version: c.Version}
}
