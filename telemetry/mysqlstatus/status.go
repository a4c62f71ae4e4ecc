package mysqlstatus

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"
)

// Counters are cumulative InnoDB counters (since server start or FLUSH
// STATUS), or their increase over an interval.
type Counters struct {
	LogWaits          uint64 // Innodb_log_waits: commits that waited for log buffer space
	DblwrWrites       uint64 // Innodb_dblwr_writes: doublewrite batch writes
	DblwrPagesWritten uint64 // Innodb_dblwr_pages_written: pages through the doublewrite buffer
	OSLogWritten      uint64 // Innodb_os_log_written: redo bytes written
	DataFsyncs        uint64 // Innodb_data_fsyncs: fsync() calls on data and log files
}

// counterVars maps status variable names to counter fields.
var counterVars = map[string]func(*Counters) *uint64{
	"innodb_log_waits":           func(c *Counters) *uint64 { return &c.LogWaits },
	"innodb_dblwr_writes":        func(c *Counters) *uint64 { return &c.DblwrWrites },
	"innodb_dblwr_pages_written": func(c *Counters) *uint64 { return &c.DblwrPagesWritten },
	"innodb_os_log_written":      func(c *Counters) *uint64 { return &c.OSLogWritten },
	"innodb_data_fsyncs":         func(c *Counters) *uint64 { return &c.DataFsyncs },
}

// gaugeVars are the status variables read as values.
var gaugeVars = []string{"innodb_buffer_pool_pages_dirty", "innodb_data_pending_writes"}

// lsnVars are MariaDB's status variables for the LOG section's figures
// (10.2+; MySQL has none). Where they are, the sampler reads the LSNs from
// them and never runs SHOW ENGINE INNODB STATUS, which prints every open
// transaction under InnoDB's lock-system latch: 4 ms of it per second at 64
// busy connections, against 0.3 ms of server CPU for the status query.
var lsnVars = []string{"innodb_lsn_current", "innodb_lsn_flushed", "innodb_lsn_last_checkpoint"}

// Sample is one reading and its difference to the previous one.
type Sample struct {
	At time.Time
	// Interval is the time since the previous sample (0 on the first).
	Interval time.Duration
	// Total are the cumulative counters; Delta their increase over
	// Interval. On the first sample, or after the server restarted (a
	// counter went down), Delta is zero and Reset is set.
	Total, Delta Counters
	Reset        bool
	// PagesDirty and PendingWrites are Innodb_buffer_pool_pages_dirty and
	// Innodb_data_pending_writes now.
	PagesDirty, PendingWrites int64
	// Log is the LOG section of SHOW ENGINE INNODB STATUS, or the same
	// figures from MariaDB's Innodb_lsn_* status variables (there,
	// PagesFlushedTo is 0).
	Log LogStatus
	// Missing names status variables the server does not have.
	Missing []string
}

// PerSecond returns Delta as rates per second over Interval.
func (s Sample) PerSecond() (logWaits, dblwrWrites, dblwrPages, redoBytes, fsyncs float64) {
	t := s.Interval.Seconds()
	if t <= 0 {
		return 0, 0, 0, 0, 0
	}
	d := s.Delta
	return float64(d.LogWaits) / t, float64(d.DblwrWrites) / t, float64(d.DblwrPagesWritten) / t,
		float64(d.OSLogWritten) / t, float64(d.DataFsyncs) / t
}

// Sampler reads a server's status once per call and keeps the previous
// reading for deltas. Not safe for concurrent use.
type Sampler struct {
	db   *sql.DB
	prev *Sample
}

// NewSampler samples through db (which it does not close).
func NewSampler(db *sql.DB) *Sampler { return &Sampler{db: db} }

// Sample reads SHOW GLOBAL STATUS, and SHOW ENGINE INNODB STATUS where
// the status variables lack the LSNs (MySQL).
func (s *Sampler) Sample(ctx context.Context) (Sample, error) {
	names := append(counterNames(), gaugeVars...)
	m, err := showPairs(ctx, s.db, "SHOW GLOBAL STATUS", append(names, lsnVars...))
	if err != nil {
		return Sample{}, err
	}
	cur := Sample{At: time.Now()}
	if err := cur.fill(m, names); err != nil {
		return Sample{}, err
	}
	var ok bool
	if cur.Log, ok, err = statusLog(m); err != nil {
		return Sample{}, err
	}
	if !ok {
		if cur.Log, err = engineLog(ctx, s.db); err != nil {
			return Sample{}, err
		}
	}
	cur.diff(s.prev)
	s.prev = &cur
	return cur, nil
}

// fill stores the status values in m into the sample.
func (cur *Sample) fill(m map[string]string, names []string) error {
	for _, n := range names {
		v, ok := m[n]
		if !ok {
			cur.Missing = append(cur.Missing, n)
			continue
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("status %s = %q: not an integer", n, v)
		}
		switch n {
		case "innodb_buffer_pool_pages_dirty":
			cur.PagesDirty = x
		case "innodb_data_pending_writes":
			cur.PendingWrites = x
		default:
			*counterVars[n](&cur.Total) = uint64(x)
		}
	}
	return nil
}

// diff sets Interval and Delta from the previous sample.
func (cur *Sample) diff(prev *Sample) {
	if prev == nil {
		cur.Reset = true
		return
	}
	cur.Interval = cur.At.Sub(prev.At)
	for _, n := range counterNames() {
		c, p := *counterVars[n](&cur.Total), *counterVars[n](&prev.Total)
		if c < p {
			cur.Reset, cur.Delta = true, Counters{}
			return
		}
		*counterVars[n](&cur.Delta) = c - p
	}
}

// engineLog runs SHOW ENGINE INNODB STATUS and parses its LOG section.
// statusLog reads the LOG figures from MariaDB's status variables in m;
// ok is false when the server has none of them.
func statusLog(m map[string]string) (l LogStatus, ok bool, err error) {
	dst := []*uint64{&l.LSN, &l.FlushedTo, &l.LastCheckpoint}
	for i, n := range lsnVars {
		v, have := m[n]
		if !have {
			return LogStatus{}, false, nil
		}
		if *dst[i], err = strconv.ParseUint(v, 10, 64); err != nil {
			return LogStatus{}, false, fmt.Errorf("status %s = %q: not an LSN", n, v)
		}
	}
	return l, true, nil
}

func engineLog(ctx context.Context, db *sql.DB) (LogStatus, error) {
	var typ, name, status string
	if err := db.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return LogStatus{}, fmt.Errorf("SHOW ENGINE INNODB STATUS: %w", err)
	}
	return ParseEngineStatus(status)
}

// counterNames lists counterVars' keys in a fixed order.
func counterNames() []string {
	return []string{"innodb_log_waits", "innodb_dblwr_writes", "innodb_dblwr_pages_written", "innodb_os_log_written", "innodb_data_fsyncs"}
}

// Metric is one named value for an interval record: the kind that holds
// the connection sets workload gauges from these.
type Metric struct {
	Name  string
	Value int64
}

// Metrics returns the sample as named values: increases over the interval
// for counters ("innodb.log_waits", ...), the cumulative counters too
// ("innodb.log_waits_total", ...: any window's increase is the difference
// of two readings, whatever the interval) and current values for gauges
// ("innodb.checkpoint_age_bytes", ...). Names are stable; units are in
// them ("_bytes"; innodb.os_log_written_total counts bytes).
func (s Sample) Metrics() []Metric {
	return []Metric{
		{"innodb.log_waits", int64(s.Delta.LogWaits)},
		{"innodb.dblwr_writes", int64(s.Delta.DblwrWrites)},
		{"innodb.dblwr_pages_written", int64(s.Delta.DblwrPagesWritten)},
		{"innodb.os_log_written_bytes", int64(s.Delta.OSLogWritten)},
		{"innodb.data_fsyncs", int64(s.Delta.DataFsyncs)},
		{"innodb.log_waits_total", int64(s.Total.LogWaits)},
		{"innodb.dblwr_writes_total", int64(s.Total.DblwrWrites)},
		{"innodb.dblwr_pages_written_total", int64(s.Total.DblwrPagesWritten)},
		{"innodb.os_log_written_total", int64(s.Total.OSLogWritten)},
		{"innodb.data_fsyncs_total", int64(s.Total.DataFsyncs)},
		{"innodb.pages_dirty", s.PagesDirty},
		{"innodb.data_pending_writes", s.PendingWrites},
		{"innodb.lsn", int64(s.Log.LSN)},
		{"innodb.checkpoint_age_bytes", int64(s.Log.CheckpointAge())},
	}
}
