package workload

import (
	"context"
	"time"
)

// Drive runs one phase of w in this process as a worker would, without a
// fabric: a Recorder starting at env.Start, closed into an interval every
// every (0: only once, after Run returns) and handed to tick, which owns
// the snapshot (nil: intervals are dropped and their histograms reused).
// The last, partial interval is handed over after Run returns, before
// Drive does. It is what every in-process runner (writepath crash, fio's
// and sysbench's commands, advise's measurements, bench helpers) uses.
func Drive(ctx context.Context, w Workload, phase string, env Env, every time.Duration, tick func(Snapshot)) error {
	rec := NewRecorder(env.Start)
	hand := func(s Snapshot) {
		if tick != nil {
			tick(s)
		} else {
			rec.Recycle(s)
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() { // owned: Drive waits for stopped
		defer close(stopped)
		if every <= 0 {
			<-done
			return
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				hand(rec.Tick(now))
			}
		}
	}()
	err := w.Run(ctx, phase, env, rec)
	close(done)
	<-stopped
	hand(rec.Tick(time.Now()))
	if err == nil {
		err = rec.Err()
	}
	return err
}
