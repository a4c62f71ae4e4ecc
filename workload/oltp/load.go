package oltp

import (
	"context"
	"errors"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
)

// Load is the run phase's clients driven by a library caller (the crash
// harness): o.Threads connections, each a goroutine blocked in raw reads
// as in the run phase, recording every transaction into the Recorder's
// "trx" and counters, until the caller's context ends. A CommitHook takes
// part in every transaction.
type Load struct {
	s     *runState
	start time.Time
	done  chan struct{}
	err   error // the loop's end; set before done is closed
}

// LoadTotals are a Load's figures, counted as the run phase counts them,
// from the Recorder's view of the Load (what its intervals hold).
type LoadTotals struct {
	Transactions, Errors, Reconnects int64
	// Latency is every transaction's, from its start to its commit.
	Latency *hist.Histogram
}

// StartLoad connects o.Threads clients (client i draws random stream
// stream+i), each with hook (nil: none), and starts their transactions,
// which run until ctx ends: o's --time, --events and --warmup-time do not
// apply (--rate does). A client that cannot connect fails it.
func StartLoad(ctx context.Context, o Options, rec *workload.Recorder, stream uint64, hook *CommitHook) (*Load, error) {
	o.Time, o.Events, o.Warmup, o.DryRun = 0, 0, 0, false
	s, err := startRunState(ctx, o, workload.Env{}, rec, stream, hook)
	if err != nil {
		return nil, err
	}
	l := &Load{s: s, start: s.start, done: make(chan struct{})}
	s.running.Store(int64(len(s.clients)))
	go func() { // owned: Wait receives done
		defer close(l.done)
		l.err = s.loop(ctx)
		s.close()
	}()
	return l, nil
}

// Start is when the clients began (all were connected).
func (l *Load) Start() time.Time { return l.start }

// Wait waits for the clients to stop (ctx ended, or a client failed) and
// returns the totals; the error is the failure that stopped them, nil
// when ctx ended it.
func (l *Load) Wait() (LoadTotals, error) {
	<-l.done
	// The clients' handles were released into the view: it holds them all.
	c := l.s.cum.Mark(time.Now())
	l.s.cum.Close()
	t := LoadTotals{Transactions: c.Op(trxOp).Count(), Errors: c.Counters["errors"],
		Reconnects: c.Counters["reconnects"], Latency: c.Op(trxOp)}
	if errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded) {
		return t, nil
	}
	return t, l.err
}
