package oltp

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// ledgerHook is a durability ledger as the crash harness keeps one: each
// client writes (thread, seq) inside every transaction and remembers the
// seqs whose COMMIT was acknowledged.
type ledgerHook struct {
	mu     sync.Mutex
	issued map[int64]int64   // thread -> last seq handed out
	acked  map[int64][]int64 // thread -> acknowledged seqs
	failed int
}

func newLedgerHook() *ledgerHook {
	return &ledgerHook{issued: map[int64]int64{}, acked: map[int64][]int64{}}
}

func (l *ledgerHook) hook(table string) *CommitHook {
	return &CommitHook{SQL: "INSERT INTO " + table + " (thread, seq) VALUES (?, ?)", Client: func(i int) CommitCallbacks {
		var seq int64
		return CommitCallbacks{
			Before: func(args []int64) {
				l.mu.Lock()
				l.issued[int64(i)]++
				seq = l.issued[int64(i)]
				l.mu.Unlock()
				args[0], args[1] = int64(i), seq
			},
			After: func(acked bool, err error) {
				l.mu.Lock()
				defer l.mu.Unlock()
				if acked {
					l.acked[int64(i)] = append(l.acked[int64(i)], seq)
				} else {
					l.failed++
				}
			},
		}
	}}
}

// TestLoadCommitHook: a Load's commit hook writes its row inside every
// transaction; every acknowledged row is there, nothing else is, and the
// statement mix is sysbench's with one INSERT more per transaction.
func TestLoadCommitHook(t *testing.T) {
	for _, mode := range []string{"prepared", "text"} {
		t.Run(mode, func(t *testing.T) {
			s := testSpec(t, "wp_hook_"+mode, 2, 2000)
			s.RandType, s.Threads = 1, u32p(4)
			o := prepared(t, s)
			o.TextProtocol = mode == "text"
			admin := adminConn(t, o.Conn.DB)
			if _, err := admin.exec("CREATE TABLE ledger (thread INT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (thread, seq))"); err != nil {
				t.Fatal(err)
			}
			before := comStatus(t, admin)
			l := newLedgerHook()
			ctx, cancel := context.WithCancel(t.Context())
			load, err := StartLoad(ctx, o, workload.NewRecorder(time.Now()), 100, l.hook("ledger"))
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			cancel()
			tot, err := load.Wait()
			if err != nil {
				t.Fatalf("Wait = %v; want the load ended by its context", err)
			}
			after := comStatus(t, admin)
			var acked int
			for th, seqs := range l.acked {
				acked += len(seqs)
				// A COMMIT cut off by the end may have committed unseen:
				// its row is there without an acknowledgement.
				where := " FROM ledger WHERE thread=" + itoa(int(th))
				rows := queryInt(t, admin, "SELECT COUNT(*)"+where)
				if rows < int64(len(seqs)) || rows > int64(len(seqs))+1 {
					t.Errorf("thread %d: %d ledger rows; %d acknowledged", th, rows, len(seqs))
				}
				sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })
				if got := queryInt(t, admin, "SELECT COUNT(*)"+where+" AND seq <= "+itoa(int(seqs[len(seqs)-1]))); got != int64(len(seqs)) {
					t.Errorf("thread %d: %d rows up to the last acknowledged seq; %d acknowledged", th, got, len(seqs))
				}
				if top := queryInt(t, admin, "SELECT MAX(seq)"+where); top > l.issued[th] {
					t.Errorf("thread %d: row seq %d was never issued (last %d)", th, top, l.issued[th])
				}
			}
			if int64(acked) != tot.Transactions || acked < 20 {
				t.Errorf("%d acknowledged, %d transactions counted; want equal, and progress", acked, tot.Transactions)
			}
			// A retried attempt, and one cut off by the end (one per
			// client), add at most their own statements.
			n, e := int64(acked), tot.Errors+int64(o.Threads)
			for k, per := range map[string]int64{"com_commit": 1, "com_insert": 2, "com_delete": 1, "com_update": 2} {
				if got := after[k] - before[k]; got < per*n || got > per*(n+e) {
					t.Errorf("%s delta = %d over %d transactions (%d retried or cut off); want %d..%d", k, got, n, e, per*n, per*(n+e))
				}
			}
			t.Logf("%s: %d transactions, %d attempts not acknowledged", mode, acked, l.failed)
		})
	}
}
