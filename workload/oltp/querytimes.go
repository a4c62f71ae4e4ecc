package oltp

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// queryTimes are one thread's statement execution times (--db-debug), as
// sysbench's exec timers: count, minimum, maximum and sum.
type queryTimes struct {
	mu       sync.Mutex
	n        int64
	min, max time.Duration
	sum      time.Duration
}

func (q *queryTimes) add(d time.Duration) {
	q.mu.Lock()
	if q.n == 0 || d < q.min {
		q.min = d
	}
	q.max = max(q.max, d)
	q.sum += d
	q.n++
	q.mu.Unlock()
}

// take returns the times so far, and with reset starts again.
func (q *queryTimes) take(reset bool) QueryStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := QueryStats{Count: q.n, MinSec: q.min.Seconds(), MaxSec: q.max.Seconds(), TotalSec: q.sum.Seconds()}
	if reset {
		*q = queryTimes{}
	}
	return s
}

// QueryStats are the statement execution times of a summary (--db-debug).
type QueryStats struct {
	Count    int64   `json:"count"`
	MinSec   float64 `json:"min_s"`
	MaxSec   float64 `json:"max_s"`
	TotalSec float64 `json:"total_s"`
}

// merge adds o's statements to q.
func (q QueryStats) merge(o QueryStats) QueryStats {
	switch {
	case o.Count == 0:
		return q
	case q.Count == 0:
		return o
	}
	return QueryStats{Count: q.Count + o.Count, MinSec: math.Min(q.MinSec, o.MinSec), MaxSec: math.Max(q.MaxSec, o.MaxSec),
		TotalSec: q.TotalSec + o.TotalSec}
}

func (q QueryStats) avg() float64 {
	if q.Count == 0 {
		return 0
	}
	return q.TotalSec / float64(q.Count)
}

// report prints db_report_cumulative's debug section; oltp_write_only
// fetches no result set, so the fetching statistics are zero, as sysbench
// prints them.
func (q *QueryStats) report(t *Text) {
	d := func(format string, args ...any) {
		t.Log(Line{Level: LevelDebug, Stamped: true, Text: fmt.Sprintf(format, args...)})
	}
	d("")
	d("Query execution statistics:")
	d("    min:                                %.4fs", q.MinSec)
	d("    avg:                                %.4fs", q.avg())
	d("    max:                                %.4fs", q.MaxSec)
	d("  total:                                %.4fs", q.TotalSec)
	d("Results fetching statistics:")
	for _, name := range []string{"    min:", "    avg:", "    max:", "  total:"} {
		d("%s                                %.4fs", name, 0.0)
	}
}
