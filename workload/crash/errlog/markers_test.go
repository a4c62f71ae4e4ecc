package errlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// want is the expected summary of one recorded log; pointers are compared
// by presence and by the figure they carry.
type want struct {
	port                 int
	crash                bool
	pid                  int
	recoveryStart        Marker // "" = none
	redoApplied          Marker
	readyPort            int // 0 = no ready on port
	checkpoint, end      uint64
	span                 uint64
	batches              int
	multi                bool
	pages, records, trx  int64
	otherReady, minError int
}

var logTests = map[string]want{
	"mariadb-10.11-clean-start.log": {port: 13399, pid: 14604, redoApplied: MarkInnoDBStarted,
		readyPort: 13399, end: 44404},
	"mariadb-10.11-crash-small.log": {port: 13399, crash: true, pid: 15075, recoveryStart: MarkRecoveryStart,
		redoApplied: MarkInnoDBStarted, readyPort: 13399, checkpoint: 44420, end: 4669675, span: 4625255,
		batches: 1, pages: 430},
	"mariadb-10.11-crash-rollback.log": {port: 13399, crash: true, pid: 15166, recoveryStart: MarkRollback,
		redoApplied: MarkInnoDBStarted, readyPort: 13399, end: 26370981, trx: 1},
	"mariadb-10.11-crash-rollback-glued.log": {port: 13399, crash: true, pid: 15166, recoveryStart: MarkRollback,
		redoApplied: MarkInnoDBStarted, readyPort: 13399, end: 26370981, trx: 1},
	"mariadb-10.11-crash-multibatch.log": {port: 13399, crash: true, pid: 15254, recoveryStart: MarkRecoveryStart,
		redoApplied: MarkInnoDBStarted, readyPort: 13399, checkpoint: 28813299, end: 53513561, span: 24700262,
		batches: 19, multi: true, pages: 2712},
	"mariadb-10.11-bad-setting.log":  {port: 13399, pid: 15315, minError: 4},
	"mysql-8.0.17-clean-start.log":   {port: 3306, pid: 1, readyPort: 3306},
	"mysql-8.0.17-port0.log":         {port: 3306, pid: 29528, otherReady: 1},
	"mysql-8.4.2-clean-start-xa.log": {port: 3306, pid: 1, redoApplied: MarkInnoDBStarted},
	"mysql-8.0-crash-recovery.log": {port: 3306, crash: true, recoveryStart: MarkNotShutdownNormally,
		checkpoint: 44923494, end: 44972150, span: 48656, batches: 1, records: 48},
	"mysql-8.0-crash-apply.log": {port: 3306, end: 57812429, batches: 1, records: 770},
}

func TestParseRecordedLogs(t *testing.T) {
	files, err := filepath.Glob("testdata/logs/*.log")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded logs: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		w, ok := logTests[name]
		if !ok {
			t.Errorf("%s has no expectation in logTests", name)
			continue
		}
		t.Run(name, func(t *testing.T) { checkLog(t, f, w) })
	}
}

func checkLog(t *testing.T, path string, w want) {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	evs, err := ParseLog(fh)
	if err != nil {
		t.Fatal(err)
	}
	r := Scan(evs, w.port)
	got := want{port: w.port, crash: r.Crash, recoveryStart: marker(r.RecoveryStart),
		redoApplied: marker(r.RedoApplied), checkpoint: r.CheckpointLSN, end: r.EndLSN, span: r.RedoSpan,
		batches: r.Batches, multi: r.MultiBatch, pages: r.PagesToRecover, records: r.RedoRecords,
		trx: r.RollbackTrx, otherReady: r.OtherReady, minError: w.minError}
	if r.ProcessStart != nil {
		got.pid = r.ProcessStart.PID
	}
	if r.Ready != nil {
		got.readyPort = r.Ready.Port
	}
	if got != w {
		t.Errorf("Scan(ParseLog(%s), %d) =\n %+v; want\n %+v", path, w.port, got, w)
	}
	if n := countMarker(r.Events, MarkError); n < w.minError {
		t.Errorf("%d [ERROR] lines matched; want >= %d", n, w.minError)
	}
	checkOrder(t, r)
}

// checkOrder asserts that the timeline points arrive in order.
func checkOrder(t *testing.T, r Recovery) {
	pts := []*Event{r.ProcessStart, r.RecoveryStart, r.RedoApplied, r.Ready}
	var last time.Time
	for _, p := range pts {
		if p == nil {
			continue
		}
		if p.Arrival.Before(last) {
			t.Errorf("timeline point %s at %v before the previous one at %v", p.Marker, p.Arrival, last)
		}
		last = p.Arrival
	}
}

func marker(ev *Event) Marker {
	if ev == nil {
		return ""
	}
	return ev.Marker
}

func countMarker(evs []Event, m Marker) int {
	n := 0
	for _, ev := range evs {
		if ev.Marker == m {
			n++
		}
	}
	return n
}

func TestGluedVersionLine(t *testing.T) {
	var p Parser
	at := time.Unix(100, 0)
	p.Line("2026-11-30 10:40:53 0 [Note] mariadbd: ready for connections.", at)
	evs := p.Line("Version: '10.11.19-MariaDB-0+deb12u1'  socket: '/tmp/s.sock'  port: 13399  Debian 122026-11-30 10:40:53 0 [Note] InnoDB: Rolled back recovered transaction 24044", at.Add(time.Second))
	if len(evs) != 2 || evs[0].Marker != MarkReady || evs[0].Port != 13399 || evs[1].Marker != MarkRollback {
		t.Fatalf("Line(glued Version) = %+v; want ready on 13399 then rollback", evs)
	}
	if !evs[0].Arrival.Equal(at) {
		t.Errorf("ready arrival = %v; want the ready line's arrival %v", evs[0].Arrival, at)
	}
	if !strings.HasSuffix(evs[0].Line, "Debian 12") {
		t.Errorf("ready line = %q; want it to end at the Version line's end", evs[0].Line)
	}
}

func TestLogTime(t *testing.T) {
	tests := []struct {
		line string
		want time.Time
	}{
		{"2024-10-29  8:28:17 0 [Note] x", time.Date(2024, 10, 29, 8, 28, 17, 0, time.Local)},
		{"2026-11-30 10:41:04 0 [Note] x", time.Date(2026, 11, 30, 10, 41, 4, 0, time.Local)},
		{"2022-01-11T19:18:31.059427Z 1 [Note] x", time.Date(2022, 1, 11, 19, 18, 31, 59427000, time.UTC)},
		{"Version: '10.11' port: 1", time.Time{}},
	}
	for _, tt := range tests {
		if got := logTime(tt.line); !got.Equal(tt.want) {
			t.Errorf("logTime(%q) = %v; want %v", tt.line, got, tt.want)
		}
	}
}

func TestXPluginIsNotReady(t *testing.T) {
	ev, ok := classify("2019-08-21T05:00:13.450277Z 0 [System] [MY-011323] [Server] X Plugin ready for connections. Socket: '/var/run/mysqld/mysqlx.sock' bind-address: '::' port: 33060")
	if ok && ev.Marker == MarkReady {
		t.Errorf("classify(X Plugin ready) = %+v; want no ready marker", ev)
	}
}
