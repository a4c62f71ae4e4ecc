package oltp

import "sync/atomic"

// Counts are one client's running totals, counted as sysbench counts
// them. They are updated by the client's goroutine and may be read by any.
// The summaries read the Recorder's counters instead (record adds each
// transaction's increase to them), so that they count what the fabric's
// intervals count.
type Counts struct {
	Transactions, Writes, Other, Errors, Reconnects atomic.Int64
}
