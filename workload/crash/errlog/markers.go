package errlog

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Marker names what an error-log line says about a server start. Markers
// are lowercase words because they are stored with results and printed.
type Marker string

// The markers the parser recognises, in the order a crash start prints them.
const (
	// MarkProcessStart: MariaDB "Starting MariaDB ... as process N",
	// MySQL "[MY-010116] ... starting as process N".
	MarkProcessStart Marker = "process_start"
	// MarkNotShutdownNormally: MySQL "[MY-012551] Database was not shutdown
	// normally!" (MariaDB 10.11 prints no such line).
	MarkNotShutdownNormally Marker = "not_shutdown_normally"
	// MarkRecoveryStart: MySQL "[MY-012552] Starting crash recovery.",
	// MariaDB "Starting crash recovery from checkpoint LSN=N" (which also
	// carries the checkpoint LSN).
	MarkRecoveryStart Marker = "recovery_start"
	// MarkCheckpoint: MySQL's checkpoint LSN ("[MY-013086] Starting to
	// parse redo log at lsn = A, whereas checkpoint_lsn = B", or "Log scan
	// progressed past the checkpoint LSN N").
	MarkCheckpoint Marker = "checkpoint"
	// MarkEndOfLog: MariaDB "End of log at LSN=N" (clean starts too), MySQL
	// "[MY-012550] Doing recovery: scanned up to log sequence number N".
	MarkEndOfLog Marker = "end_of_log"
	// MarkMultiBatch: MariaDB "Multi-batch recovery needed at LSN N" (the
	// buffer pool cannot hold every page to recover at once).
	MarkMultiBatch Marker = "multi_batch"
	// MarkToRecover: MariaDB "To recover: N pages", "To recover: LSN A/B; N
	// pages" (one per batch), 10.6 "Starting final batch to recover N pages".
	MarkToRecover Marker = "to_recover"
	// MarkApplyBatch: MySQL "[MY-012532] Applying a batch of N redo log
	// records".
	MarkApplyBatch Marker = "apply_batch"
	// MarkApplyDone: MySQL "[MY-012535] Apply batch completed" — printed on
	// clean starts too, so it means something only after a recovery start.
	MarkApplyDone Marker = "apply_done"
	// MarkRollback: transactions to roll back, rolled back, or rollback
	// completed (both flavors print the same InnoDB text).
	MarkRollback Marker = "rollback"
	// MarkInnoDBStarted: MariaDB "log sequence number N; transaction id M",
	// MySQL "[MY-013577] InnoDB initialization has ended.": redo is applied
	// and InnoDB is open.
	MarkInnoDBStarted Marker = "innodb_started"
	// MarkReady: "ready for connections" on a TCP port (MariaDB gives the
	// port on the following "Version:" line, MySQL on the same line).
	MarkReady Marker = "ready"
	// MarkError: an [ERROR] line, kept as evidence of a failed start.
	MarkError Marker = "error"
)

// Event is one matched error-log line.
type Event struct {
	Marker Marker `json:"marker"`
	// Arrival is when the harness read the line (our clock): log
	// timestamps have one-second resolution on MariaDB, so the timeline
	// is built from arrivals and the log's own time is kept as evidence.
	Arrival time.Time `json:"arrival"`
	// LogTime is the line's own timestamp; zero when it has none.
	LogTime time.Time `json:"log_time,omitzero"`
	// Line is the log line as written (for MariaDB's ready, both lines).
	Line string `json:"line"`
	// LSN is the LSN the line names: checkpoint, end of log, batch LSN.
	LSN uint64 `json:"lsn,omitempty"`
	// EndLSN is the end LSN of a multi-batch "To recover: LSN A/B" line.
	EndLSN uint64 `json:"end_lsn,omitempty"`
	// Count is pages to recover, redo records in a batch, or transactions
	// to roll back.
	Count int64 `json:"count,omitempty"`
	// Port is the TCP port of a ready line (0: a temporary init server, or
	// a server without TCP).
	Port int `json:"port,omitempty"`
	// Socket is the Unix socket of a ready line.
	Socket string `json:"socket,omitempty"`
	// PID is the process id of a process-start line.
	PID int `json:"pid,omitempty"`
}

// rule matches one kind of line; fill copies the submatches into ev.
type rule struct {
	marker Marker
	re     *regexp.Regexp
	fill   func(ev *Event, m []string)
}

func lsnAt(i int) func(*Event, []string) {
	return func(ev *Event, m []string) { ev.LSN = atou(m[i]) }
}

func countAt(i int) func(*Event, []string) {
	return func(ev *Event, m []string) { ev.Count = int64(atou(m[i])) }
}

// rules are tried in order; the first match wins. They match the message
// text, not the [MY-nnnnnn] codes alone, so that both flavors and older
// MySQL releases (which print no codes) are recognised by one table.
var rules = []rule{
	{MarkProcessStart, regexp.MustCompile(`(?:Starting MariaDB .* as process|\(mysqld [^)]*\) starting as process) (\d+)`),
		func(ev *Event, m []string) { ev.PID = int(atou(m[1])) }},
	{MarkNotShutdownNormally, regexp.MustCompile(`InnoDB\]? ?:? ?Database was not shutdown normally`), nil},
	{MarkRecoveryStart, regexp.MustCompile(`InnoDB: Starting crash recovery from checkpoint LSN=(\d+)`), lsnAt(1)},
	// Not "Starting XA crash recovery" nor the binlog's "Starting crash
	// recovery...": only InnoDB's line starts redo recovery.
	{MarkRecoveryStart, regexp.MustCompile(`(?:\[InnoDB\]|InnoDB:) Starting crash recovery\.`), nil},
	{MarkCheckpoint, regexp.MustCompile(`whereas checkpoint_lsn = (\d+)`), lsnAt(1)},
	{MarkCheckpoint, regexp.MustCompile(`(?i)Log scan progressed past the checkpoint lsn (\d+)`), lsnAt(1)},
	{MarkEndOfLog, regexp.MustCompile(`InnoDB: End of log at LSN=(\d+)`), lsnAt(1)},
	{MarkEndOfLog, regexp.MustCompile(`Doing recovery: scanned up to log sequence number (\d+)`), lsnAt(1)},
	{MarkMultiBatch, regexp.MustCompile(`Multi-batch recovery needed at LSN (\d+)`), lsnAt(1)},
	{MarkToRecover, regexp.MustCompile(`InnoDB: To recover: LSN (\d+)/(\d+); (\d+) pages`),
		func(ev *Event, m []string) { ev.LSN, ev.EndLSN, ev.Count = atou(m[1]), atou(m[2]), int64(atou(m[3])) }},
	{MarkToRecover, regexp.MustCompile(`InnoDB: To recover: (\d+) pages`), countAt(1)},
	{MarkToRecover, regexp.MustCompile(`Starting final batch to recover (\d+) pages`), countAt(1)},
	{MarkApplyBatch, regexp.MustCompile(`Applying a batch of (\d+) redo log records`), countAt(1)},
	{MarkApplyDone, regexp.MustCompile(`Apply batch completed`), nil},
	{MarkRollback, regexp.MustCompile(`(\d+) transaction\(s\) which must be rolled back`), countAt(1)},
	{MarkRollback, regexp.MustCompile(`Rolled back recovered transaction|Rollback of non-prepared transactions completed|Starting in background the rollback`), nil},
	{MarkInnoDBStarted, regexp.MustCompile(`InnoDB: (?:[0-9.]+ started; )?log sequence number (\d+)(?:; transaction id \d+)?$`), lsnAt(1)},
	{MarkInnoDBStarted, regexp.MustCompile(`InnoDB initialization has ended`), nil},
	// "X Plugin ready for connections" is MySQL's second protocol on its
	// own port; it says nothing about the classic port.
	{MarkReady, regexp.MustCompile(`\S+: ready for connections\.(?:.*\bport: (\d+))?`), readyPort},
	{MarkError, regexp.MustCompile(`\[ERROR\]`), nil},
}

// readyPort stores the port of a MySQL ready line, or -1 when it follows
// on the next line (MariaDB).
func readyPort(ev *Event, m []string) {
	ev.Port = -1
	if m[1] != "" {
		ev.Port = int(atou(m[1]))
		ev.Socket = socketOf(ev.Line)
	}
}

// readySocket reads the socket of a ready or Version line.
var readySocket = regexp.MustCompile(`\bsocket: '([^']*)'`)

func socketOf(line string) string {
	if m := readySocket.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// atou parses a decimal that the regexp already checked; an overflowing
// value (a fuzzed line) reads as 0.
func atou(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

// classify matches one complete log line. Port -1 on a ready event means
// the port follows on the next line (MariaDB).
func classify(line string) (Event, bool) {
	msg := strings.TrimRight(line, "\r")
	for _, r := range rules {
		m := r.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		ev := Event{Marker: r.marker, Line: msg, LogTime: logTime(msg)}
		if r.fill != nil {
			r.fill(&ev, m)
		}
		return ev, true
	}
	return Event{}, false
}

var (
	// mysqlTS: "2022-01-11T19:18:31.059427Z" or with a +08:00 offset.
	mysqlTS = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))\s`)
	// mariaTS: "2026-11-30 10:41:04" or space-padded "2024-10-29  8:28:17".
	mariaTS = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}) +(\d{1,2}):(\d{2}):(\d{2})\s`)
)

// logTime reads a line's own timestamp. MariaDB writes local time without
// a zone and with second resolution.
func logTime(line string) time.Time {
	if m := mysqlTS.FindStringSubmatch(line); m != nil {
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err == nil {
			return t
		}
	}
	if m := mariaTS.FindStringSubmatch(line); m != nil {
		s := m[1] + " " + pad2(m[2]) + ":" + m[3] + ":" + m[4]
		t, err := time.ParseInLocation(time.DateTime, s, time.Local)
		if err == nil {
			return t
		}
	}
	return time.Time{}
}

func pad2(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}
