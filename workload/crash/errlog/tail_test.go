package errlog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTailLive appends a MariaDB start to a file in pieces, the Version
// line without its newline, and checks that the tail stamps arrivals in
// order and still finds the ready port.
func TestTailLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "error.log")
	if err := os.WriteFile(path, []byte("2026-11-30 10:00:00 0 [Note] an earlier start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	tail := StartTail(context.Background(), path, st.Size(), 13399, "")
	appendLog(t, path, "2026-11-30 10:40:37 0 [Note] Starting MariaDB 10.11.19-MariaDB as process 15075\n")
	time.Sleep(30 * time.Millisecond)
	appendLog(t, path, "2026-11-30 10:40:37 0 [Note] InnoDB: Starting crash recovery from checkpoint LSN=44420\n"+
		"2026-11-30 10:40:37 0 [Note] InnoDB: End of log at LSN=4669675\n")
	time.Sleep(30 * time.Millisecond)
	appendLog(t, path, "2026-11-30 10:40:37 0 [Note] mariadbd: ready for connections.\n"+
		"Version: '10.11.19-MariaDB'  socket: '/tmp/s.sock'  port: 13399  Debian 12")
	if !tail.WaitReady(context.Background(), 2*time.Second) {
		t.Fatal("tail did not see the ready line without a trailing newline")
	}
	r, err := tail.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if r.ProcessStart == nil || r.RecoveryStart == nil || r.Ready == nil || r.RedoSpan != 4669675-44420 {
		t.Fatalf("tail recovery = %+v; want start, recovery, ready and the span", r)
	}
	if !r.ProcessStart.Arrival.Before(r.RecoveryStart.Arrival) || !r.RecoveryStart.Arrival.Before(r.Ready.Arrival) {
		t.Errorf("arrivals %v, %v, %v; want strictly increasing", r.ProcessStart.Arrival, r.RecoveryStart.Arrival, r.Ready.Arrival)
	}
	if r2, _ := tail.Stop(); len(r2.Events) != len(r.Events) {
		t.Errorf("second Stop changed the result")
	}
}

func appendLog(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
