package crash

import (
	"context"
	"time"

	"github.com/writepath/writepath/mysqld"
)

// crasher is how a round crashes the server under load: kill -9 alone
// (killCrasher), or kill -9 and a power cut through the powerloss layer
// (powerCrasher).
type crasher interface {
	// Arm readies round n's first start (power loss: mounts the layer and
	// points the server at it). Call it after the snapshot is restored.
	Arm(ctx context.Context, n int) error
	// Settle is called once the server is ready, before the load. Power
	// loss makes everything durable there (see powerCrasher.Settle).
	Settle(ctx context.Context) error
	// Crash stops the server abruptly and returns once it is gone and its
	// files are what the restart will find. It sets rr.Timeline.Kill to
	// the moment of the kill and records what the crash dropped in rr.
	Crash(ctx context.Context, rr *RoundResult) error
	// Disarm undoes Arm; the server must be stopped first. Idempotent,
	// called after every round, failed or not.
	Disarm() error
}

// killCrasher is kill -9 of the server process: the OS page cache keeps
// every write the server made, synced or not.
type killCrasher struct{ inst *mysqld.Instance }

var _ crasher = killCrasher{}

func (k killCrasher) Arm(context.Context, int) error { return nil }

func (k killCrasher) Settle(context.Context) error { return nil }

func (k killCrasher) Crash(_ context.Context, rr *RoundResult) error {
	rr.Timeline.Kill = time.Now()
	return k.inst.Kill()
}

func (k killCrasher) Disarm() error { return nil }
