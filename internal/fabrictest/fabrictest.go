package fabrictest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/hostknob"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
)

// Options describes a test fabric.
type Options struct {
	Workers int
	// Bufconn serves over an in-memory listener instead of loopback TCP.
	Bufconn bool
	// Coordinator overrides FastCoordinator's fields that are set.
	Coordinator coordinator.Config
	// DBPath, if set, is used instead of a file in a temporary directory.
	DBPath string
	// DataDir, if set, is the workers' data directory instead of a
	// temporary one; Guard, if set, is their guard.
	DataDir string
	Guard   workload.Guard
	// Knobs, if set, is every worker's (shared) host-knob applier.
	Knobs *hostknob.Host
}

// FastCoordinator is a coordinator tuned for tests: 100 ms intervals and
// heartbeats every 100 ms. Timeouts stay generous: tests share two cores
// with everything else under -race, and a starved worker must not be
// declared lost.
func FastCoordinator() coordinator.Config {
	return coordinator.Config{
		HeartbeatInterval: 100 * time.Millisecond,
		HeartbeatTimeout:  3 * time.Second,
		Interval:          100 * time.Millisecond,
		StartMargin:       100 * time.Millisecond,
		MergeWait:         1500 * time.Millisecond,
		ReadyTimeout:      10 * time.Second,
		ValidateTimeout:   10 * time.Second,
		CancelGrace:       3 * time.Second,
	}
}

// Start starts a fabric and waits for its workers; it is closed (and the
// store checked) when the test ends.
func Start(t testing.TB, opt Options) *local.Fabric {
	t.Helper()
	cfg := local.Config{
		Workers:     opt.Workers,
		DBPath:      opt.DBPath,
		Coordinator: overlay(FastCoordinator(), opt.Coordinator),
		Worker: worker.Config{DataDir: opt.DataDir, Guard: opt.Guard, Knobs: opt.Knobs,
			MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond},
		CheckOnClose: true,
	}
	if os.Getenv("FABRICTEST_LOG") != "" {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.Worker.DataDir == "" {
		cfg.Worker.DataDir = t.TempDir()
	}
	if cfg.DBPath == "" {
		cfg.DBPath = filepath.Join(t.TempDir(), "writepath.db")
	}
	if opt.Bufconn {
		lis := bufconn.Listen(1 << 20)
		cfg.Listener = lis
		cfg.DialOptions = []grpc.DialOption{
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
		}
	}
	f, err := local.Start(cfg)
	if err != nil {
		t.Fatalf("start fabric: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("close (with the store check): %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.WaitWorkers(ctx, opt.Workers); err != nil {
		t.Fatalf("workers: %v", err)
	}
	return f
}

// overlay returns base with the non-zero fields of o.
func overlay(base, o coordinator.Config) coordinator.Config {
	set := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	set(&base.HeartbeatInterval, o.HeartbeatInterval)
	set(&base.HeartbeatTimeout, o.HeartbeatTimeout)
	set(&base.Interval, o.Interval)
	set(&base.StartMargin, o.StartMargin)
	set(&base.MergeWait, o.MergeWait)
	set(&base.ReadyTimeout, o.ReadyTimeout)
	set(&base.ValidateTimeout, o.ValidateTimeout)
	set(&base.CancelGrace, o.CancelGrace)
	set(&base.HelloTimeout, o.HelloTimeout)
	if o.KeepWorkerIntervals > 0 {
		base.KeepWorkerIntervals = o.KeepWorkerIntervals
	}
	if o.MaxWorkers > 0 {
		base.MaxWorkers = o.MaxWorkers
	}
	if o.MaxActiveCampaigns > 0 {
		base.MaxActiveCampaigns = o.MaxActiveCampaigns
	}
	return base
}

// SynthSpec packs a synth spec as a RunSpec with a 100 ms interval.
func SynthSpec(s testkind.Spec) *writepathv1.RunSpec {
	return &writepathv1.RunSpec{
		Spec:     &anypb.Any{TypeUrl: testkind.Kind, Value: s.Marshal()},
		Interval: durationpb.New(100 * time.Millisecond),
	}
}
