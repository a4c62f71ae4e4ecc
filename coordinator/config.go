package coordinator

import (
	"context"
	"log/slog"
	"time"
)

// Defaults for Config's zero fields.
const (
	DefaultHeartbeatInterval = time.Second
	DefaultHeartbeatTimeout  = 5 * time.Second
	DefaultInterval          = time.Second
	DefaultStartMargin       = 500 * time.Millisecond
	DefaultReadyTimeout      = 2 * time.Minute
	DefaultValidateTimeout   = 10 * time.Second
	DefaultCancelGrace       = 1500 * time.Millisecond
	DefaultHelloTimeout      = 10 * time.Second
	// DefaultMaxWorkers bounds the workers connected at once: the fleet
	// budget is 1,000 workers in 512 MiB; four times that still fits.
	DefaultMaxWorkers = 4096
	// DefaultMaxActiveCampaigns bounds the campaigns executing at once.
	DefaultMaxActiveCampaigns = 16
	// DefaultMaxQueuedSnapshots bounds the per-worker snapshots waiting
	// for the store: 16 s of 1,000 workers at 1 s intervals, ~80 MB
	// (a snapshot holds ~3 KB of histogram and its maps).
	DefaultMaxQueuedSnapshots = 16384
	// DefaultKeepWorkerIntervals is the retention the commands start
	// with (`coordinator --keep-worker-intervals`, the embedded fabric,
	// `runs prune`): the 20 newest ended runs keep their per-worker
	// snapshots; older ones keep merged intervals and per-worker totals.
	// A Config's zero KeepWorkerIntervals keeps everything (tests).
	DefaultKeepWorkerIntervals = 20
)

// Config tunes a Coordinator; zero fields take the defaults above.
type Config struct {
	// HeartbeatInterval is how often each worker is pinged.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is how long a silent worker stays registered; past
	// it the worker is lost and its runs go on without it.
	HeartbeatTimeout time.Duration
	// Interval is the default reporting period d.
	Interval time.Duration
	// StartMargin is the least time between Start and the common start;
	// the margin grows with the slowest worker's round trip.
	StartMargin time.Duration
	// MergeWait is how long after interval k ends the merge waits for
	// missing workers; zero means max(d, HeartbeatTimeout).
	MergeWait time.Duration
	// ReadyTimeout bounds the start barrier (decoding and preparing a spec).
	ReadyTimeout time.Duration
	// ValidateTimeout bounds the workers' answers to a submit.
	ValidateTimeout time.Duration
	// CancelGrace is how long a cancel waits for workers to confirm.
	CancelGrace time.Duration
	// KeepWorkerIntervals, when positive, is the store's retention: after
	// each run, only the newest KeepWorkerIntervals ended runs keep their
	// per-worker interval snapshots (merged intervals are always kept).
	KeepWorkerIntervals int
	// HelloTimeout bounds the wait for a new stream's Hello.
	HelloTimeout time.Duration
	// MaxWorkers bounds the workers connected at once (a reconnecting
	// worker replaces its old session and is not counted twice).
	MaxWorkers int
	// MaxActiveCampaigns bounds the campaigns executing at once.
	MaxActiveCampaigns int
	// MaxQueuedSnapshots bounds the per-worker snapshots merged but not
	// yet stored. A coordinator whose store falls behind (a starved disk
	// or CPU) stops keeping the snapshots of further intervals past it,
	// logs it and counts them (Stats.SnapshotsDropped), instead of
	// growing without bound (a starved run once reached 755 MiB). Merged
	// intervals and each worker's phase total stay exact.
	MaxQueuedSnapshots int
	// WorkerIdentity, when set, returns the worker names the credentials
	// of the call in ctx prove (a worker certificate's common name and DNS
	// names); bound is false when they prove none (plaintext, token). A
	// Hello naming another worker is refused, so one worker's certificate
	// cannot take over another's name and receive its jobs. The command
	// wires auth.WorkerNames; the coordinator knows no credentials.
	WorkerIdentity func(ctx context.Context) (names []string, bound bool)
	// Log receives lifecycle events; nil discards.
	Log *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&c.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&c.Interval, DefaultInterval)
	def(&c.StartMargin, DefaultStartMargin)
	def(&c.ReadyTimeout, DefaultReadyTimeout)
	def(&c.ValidateTimeout, DefaultValidateTimeout)
	def(&c.CancelGrace, DefaultCancelGrace)
	def(&c.HelloTimeout, DefaultHelloTimeout)
	if c.MaxWorkers <= 0 {
		c.MaxWorkers = DefaultMaxWorkers
	}
	if c.MaxActiveCampaigns <= 0 {
		c.MaxActiveCampaigns = DefaultMaxActiveCampaigns
	}
	if c.MaxQueuedSnapshots <= 0 {
		c.MaxQueuedSnapshots = DefaultMaxQueuedSnapshots
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// mergeWait is the bounded wait for interval d.
func (c Config) mergeWait(d time.Duration) time.Duration {
	if c.MergeWait > 0 {
		return c.MergeWait
	}
	return max(d, c.HeartbeatTimeout)
}
