package oltp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// TestStopEndsInOrder: a run whose context ends with workload.ErrStopped
// (another worker ended the phase) returns its summary and no error; a
// stop after --time, with every write blocked, counts each thread's
// transaction as cut off by the run's forced shutdown. A stop before
// --time cuts nothing off that sysbench would report; a plain
// cancellation is unchanged. The forced-shutdown and queue-full ends are
// the ones that end the phase for every worker.
func TestStopEndsInOrder(t *testing.T) {
	for _, e := range []error{ErrForcedShutdown, ErrQueueFull} {
		if !errors.Is(e, workload.ErrEndsPhase) {
			t.Errorf("%v does not end the phase for every worker", e)
		}
	}
	s := testSpec(t, "wp_stop", 1, 1000)
	s.Threads, s.TimeSeconds = u32p(2), u32p(1)
	o := prepared(t, s)
	lock := adminConn(t, "wp_stop")
	if _, err := lock.exec("LOCK TABLES sbtest1 READ"); err != nil {
		t.Fatal(err)
	}
	defer lock.exec("UNLOCK TABLES")
	for _, tt := range []struct {
		name       string
		after      time.Duration
		cause      error
		wantErr    error
		forced     bool
		unfinished int
	}{
		{"stopped after --time", 1500 * time.Millisecond, workload.Stopped("worker-2: forced shutdown"), nil, true, 2},
		{"stopped before --time", 300 * time.Millisecond, workload.Stopped("worker-2: queue full"), nil, false, 0},
		{"cancelled", 300 * time.Millisecond, errors.New("cancelled by client"), errors.New("cancelled by client"), false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(t.Context())
			time.AfterFunc(tt.after, func() { cancel(tt.cause) })
			sum, _, err := runFor(t, ctx, o)
			if (err == nil) != (tt.wantErr == nil) || err != nil && err.Error() != tt.wantErr.Error() {
				t.Errorf("Run = %v; want %v", err, tt.wantErr)
			}
			if sum == nil {
				t.Fatal("no summary")
			}
			if sum.ForcedShutdown != tt.forced || sum.Unfinished != tt.unfinished || sum.Threads != 2 {
				t.Errorf("forced shutdown %v, unfinished %d, threads %d; want %v, %d, 2",
					sum.ForcedShutdown, sum.Unfinished, sum.Threads, tt.forced, tt.unfinished)
			}
		})
	}
}
