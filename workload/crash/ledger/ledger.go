// Package ledger is the crash kind's durability ledger: every load
// transaction also inserts (thread, seq) into wp_ledger, inside the
// transaction, and a seq counts as acknowledged only when its COMMIT
// returned OK. After recovery Verify finds every acknowledged pair that is
// gone (data loss) and the in-flight ones that survived (legal). It uses
// database/sql and imports nothing of ours.
package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
)

// Table is the durability ledger: one row per transaction, written
// inside that transaction, so the row is durable exactly when the
// transaction is.
const Table = "wp_ledger"

// ledgerDDL creates the ledger. It is created once after prepare, so the
// snapshot holds it empty and every round starts with an empty ledger.
const ledgerDDL = "CREATE TABLE IF NOT EXISTS " + Table +
	" (thread INT UNSIGNED NOT NULL, seq BIGINT UNSIGNED NOT NULL, PRIMARY KEY (thread, seq)) ENGINE=InnoDB"

// Insert is the statement each transaction adds: (thread, seq).
const Insert = "INSERT INTO " + Table + " (thread, seq) VALUES (?, ?)"

// Ledger remembers, per client thread, which sequence numbers the server
// acknowledged: a seq counts only when its COMMIT returned OK. A commit
// in flight at the kill is not acknowledged; finding its row afterwards is
// legal (the server may have made it durable before dying unseen).
type Ledger struct {
	threads []*Thread
}

// Thread is one client thread's part of the ledger. Each is used by
// one goroutine during the load and read after the load has stopped.
type Thread struct {
	id uint32
	mu struct {
		sync.Mutex
		next  uint64
		acked []uint64 // ascending: seqs are handed out in order
	}
}

// New returns a ledger for n threads, numbered 0..n-1.
func New(n int) *Ledger {
	l := &Ledger{threads: make([]*Thread, n)}
	for i := range l.threads {
		l.threads[i] = &Thread{id: uint32(i)}
	}
	return l
}

// Thread returns thread i's ledger.
func (l *Ledger) Thread(i int) *Thread { return l.threads[i] }

// ID is the thread number written to the ledger's thread column.
func (t *Thread) ID() uint32 { return t.id }

// Next returns the seq for the next transaction attempt (a retried
// transaction takes a new one; its rolled-back row vanished with it).
func (t *Thread) Next() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.next++
	return t.mu.next
}

// Ack records that COMMIT of the transaction holding seq returned OK.
func (t *Thread) Ack(seq uint64) {
	t.mu.Lock()
	t.mu.acked = append(t.mu.acked, seq)
	t.mu.Unlock()
}

func (t *Thread) snapshot() (acked []uint64, issued uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]uint64(nil), t.mu.acked...), t.mu.next
}

// Acknowledged is the number of acknowledged commits over all threads.
func (l *Ledger) Acknowledged() int64 {
	var n int64
	for _, t := range l.threads {
		a, _ := t.snapshot()
		n += int64(len(a))
	}
	return n
}

// Pair is one ledger row.
type Pair struct {
	Thread uint32 `json:"thread"`
	Seq    uint64 `json:"seq"`
}

// Check is the durability verdict of one round.
type Check struct {
	// Acknowledged commits (COMMIT returned OK before the kill).
	Acknowledged int64 `json:"acknowledged"`
	// Present rows found after recovery.
	Present int64 `json:"present"`
	// LostAcknowledged are acknowledged commits whose row is gone: data
	// loss. Must be 0 with innodb_flush_log_at_trx_commit=1.
	LostAcknowledged int64 `json:"lost_acknowledged"`
	// PresentUnacknowledged are rows of commits in flight at the kill that
	// survived: legal.
	PresentUnacknowledged int64 `json:"present_unacknowledged"`
	// Unknown rows name a thread or seq never issued: a harness bug or a
	// ledger not emptied by the restore.
	Unknown int64 `json:"unknown,omitempty"`
	// LostSample lists up to maxSample lost pairs as evidence.
	LostSample []Pair `json:"lost_sample,omitempty"`
}

const maxSample = 20

// Verify reads the ledger table after recovery and compares it with what
// was acknowledged.
func (l *Ledger) Verify(ctx context.Context, db *sql.DB) (Check, error) {
	present, err := readLedger(ctx, db)
	if err != nil {
		return Check{}, err
	}
	var c Check
	for _, seqs := range present {
		c.Present += int64(len(seqs))
	}
	for _, t := range l.threads {
		acked, issued := t.snapshot()
		l.compare(&c, t.id, acked, issued, present[t.id])
		delete(present, t.id)
	}
	for _, seqs := range present {
		c.Unknown += int64(len(seqs)) // threads this ledger never had
	}
	return c, nil
}

// compare walks one thread's acknowledged and present seqs (both sorted).
func (l *Ledger) compare(c *Check, id uint32, acked []uint64, issued uint64, present []uint64) {
	c.Acknowledged += int64(len(acked))
	i, j := 0, 0
	for i < len(acked) || j < len(present) {
		switch {
		case j == len(present) || i < len(acked) && acked[i] < present[j]:
			c.LostAcknowledged++
			if len(c.LostSample) < maxSample {
				c.LostSample = append(c.LostSample, Pair{id, acked[i]})
			}
			i++
		case i == len(acked) || present[j] < acked[i]:
			if present[j] > issued {
				c.Unknown++
			} else {
				c.PresentUnacknowledged++
			}
			j++
		default:
			i++
			j++
		}
	}
}

// readLedger returns the ledger's seqs per thread, ascending.
func readLedger(ctx context.Context, db *sql.DB) (map[uint32][]uint64, error) {
	rows, err := db.QueryContext(ctx, "SELECT thread, seq FROM "+Table+" ORDER BY thread, seq")
	if err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", Table, err)
	}
	defer rows.Close()
	out := map[uint32][]uint64{}
	for rows.Next() {
		var p Pair
		if err := rows.Scan(&p.Thread, &p.Seq); err != nil {
			return nil, fmt.Errorf("read ledger %s: %w", Table, err)
		}
		out[p.Thread] = append(out[p.Thread], p.Seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", Table, err)
	}
	for _, s := range out {
		sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	}
	return out, nil
}

// Create creates the (empty) ledger table.
func Create(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, ledgerDDL); err != nil {
		return fmt.Errorf("create ledger %s: %w", Table, err)
	}
	return nil
}
