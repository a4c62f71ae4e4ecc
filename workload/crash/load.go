package crash

import (
	"context"
	"fmt"
	"time"

	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/crash/ledger"
	"github.com/writepath/writepath/workload/oltp"
)

// txnOp names the latency histogram of the load's transactions (the oltp
// kind's operation name, so intervals of both kinds line up).
const txnOp = "trx"

// load is one round's OLTP write-only load: the oltp run phase's clients
// (a goroutine per connection in raw reads, as sysbench's threads), each
// writing a ledger row inside every transaction through a commit hook.
type load struct {
	o      oltp.Options
	ledger *ledger.Ledger
	l      *oltp.Load
	start  time.Time
}

// startLoad connects every thread and starts the transaction loops; they
// run until ctx ends. A thread that cannot connect fails the round.
func startLoad(ctx context.Context, o oltp.Options, rec *workload.Recorder, seed uint64) (*load, error) {
	ld := &load{o: o, ledger: ledger.New(o.Threads)}
	l, err := oltp.StartLoad(ctx, o, rec, seed, ld.hook())
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	ld.l, ld.start = l, l.Start()
	return ld, nil
}

// hook writes the ledger row (thread, seq) inside every transaction and
// records the seq as acknowledged when COMMIT returned OK.
func (ld *load) hook() *oltp.CommitHook {
	return &oltp.CommitHook{SQL: ledger.Insert, Client: func(i int) oltp.CommitCallbacks {
		t := ld.ledger.Thread(i)
		var seq uint64 // owned by client i's goroutine
		return oltp.CommitCallbacks{
			Before: func(args []int64) {
				seq = t.Next()
				args[0], args[1] = int64(t.ID()), int64(seq)
			},
			After: func(acked bool, _ error) {
				if acked {
					t.Ack(seq)
				}
			},
		}
	}}
}

// wait waits for every client (after ctx ended), and returns the round's
// load statistics up to end (the kill).
func (ld *load) wait(end time.Time) (LoadStats, error) {
	tot, err := ld.l.Wait()
	st := LoadStats{Threads: ld.o.Threads, Seconds: end.Sub(ld.start).Seconds(),
		Errors: tot.Errors, Reconnects: tot.Reconnects}
	h := tot.Latency
	st.Transactions = h.Count()
	if st.Seconds > 0 {
		st.TPS = float64(st.Transactions) / st.Seconds
	}
	st.P50MS, st.P95MS = nsMS(h.Percentile(50)), nsMS(h.Percentile(95))
	st.P99MS, st.MaxMS = nsMS(h.Percentile(99)), nsMS(h.Max())
	if err != nil {
		err = fmt.Errorf("load: %w", err)
	}
	return st, err
}

func nsMS(ns int64) float64 { return float64(ns/1000) / 1000 }
