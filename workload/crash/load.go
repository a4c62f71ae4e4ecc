package crash

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

// TxnOp names the latency histogram of the load's transactions (the oltp
// kind's operation name, so intervals of both kinds line up).
const TxnOp = "trx"

// load is one round's OLTP write-only load: o.Threads runners, each
// writing a ledger row inside every transaction.
type load struct {
	o      oltp.Options
	ledger *Ledger
	rec    *workload.Recorder
	start  time.Time

	wg sync.WaitGroup
	mu struct {
		sync.Mutex
		lat  *hist.Histogram // committed transactions of this round
		errs []error
	}
	runners []*oltp.Runner
}

// startLoad connects every thread and starts the transaction loops; they
// run until ctx ends. A thread that cannot connect fails the round.
func startLoad(ctx context.Context, o oltp.Options, rec *workload.Recorder, seed uint64) (*load, error) {
	l := &load{o: o, ledger: NewLedger(o.Threads), rec: rec}
	l.mu.lat = hist.New()
	for i := 0; i < o.Threads; i++ {
		r, err := oltp.NewRunner(ctx, o, seed+uint64(i), l.hook(l.ledger.Thread(i)))
		if err != nil {
			l.closeRunners()
			return nil, fmt.Errorf("load thread %d: %w", i, err)
		}
		l.runners = append(l.runners, r)
	}
	l.start = time.Now()
	for i, r := range l.runners {
		l.wg.Add(1)
		go l.loop(ctx, i, r)
	}
	return l, nil
}

// hook writes the ledger row inside the transaction and records the seq
// as acknowledged when COMMIT returned OK.
func (l *load) hook(t *ThreadLedger) oltp.Hook {
	var seq uint64 // owned by the runner's goroutine
	return oltp.Hook{
		BeforeCommit: func(_ context.Context, s oltp.Session) error {
			seq = t.Next()
			_, err := s.Exec(LedgerInsert, t.ID(), seq)
			return err
		},
		AfterCommit: func(acked bool, _ error) {
			if acked {
				t.Ack(seq)
			}
		},
	}
}

func (l *load) loop(ctx context.Context, i int, r *oltp.Runner) {
	defer l.wg.Done()
	h := l.rec.Handle(TxnOp)
	txns := l.rec.Counter("transactions")
	own := hist.New()
	defer l.merge(own)
	for ctx.Err() == nil {
		t0 := time.Now()
		err := r.Txn(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) && ctx.Err() == nil {
				l.fail(fmt.Errorf("load thread %d: %w", i, err))
			}
			return
		}
		d := time.Since(t0)
		h.RecordDuration(d)
		own.RecordDuration(d)
		txns.Add(1)
	}
}

func (l *load) merge(own *hist.Histogram) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.mu.lat.Merge(own); err != nil {
		l.mu.errs = append(l.mu.errs, fmt.Errorf("merge latencies: %w", err))
	}
}

func (l *load) fail(err error) {
	l.mu.Lock()
	l.mu.errs = append(l.mu.errs, err)
	l.mu.Unlock()
}

// wait waits for every loop (after ctx ended), closes the connections and
// returns the round's load statistics up to end (the kill).
func (l *load) wait(end time.Time) (LoadStats, error) {
	l.wg.Wait()
	st := LoadStats{Threads: l.o.Threads, Seconds: end.Sub(l.start).Seconds()}
	for _, r := range l.runners {
		st.Errors += r.Counts.Errors.Load()
		st.Reconnects += r.Counts.Reconnects.Load()
	}
	l.closeRunners()
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.mu.lat
	st.Transactions = h.Count()
	if st.Seconds > 0 {
		st.TPS = float64(st.Transactions) / st.Seconds
	}
	st.P50MS, st.P95MS = nsMS(h.Percentile(50)), nsMS(h.Percentile(95))
	st.P99MS, st.MaxMS = nsMS(h.Percentile(99)), nsMS(h.Max())
	return st, errors.Join(l.mu.errs...)
}

func (l *load) closeRunners() {
	for _, r := range l.runners {
		r.Close()
	}
}

func nsMS(ns int64) float64 { return float64(ns/1000) / 1000 }
