package oltp

import (
	"strings"
	"testing"
	"time"
)

// TestLockWaitTimeoutIsRolledBackAndRetried holds the only row of the
// only table for 2.5 s with innodb_lock_wait_timeout=1: with 1205 in
// --mysql-ignore-errors (the default) the run's transactions time out,
// are rolled back and tried again until the row is free; without it the
// run ends with an error that names the fix.
func TestLockWaitTimeoutIsRolledBackAndRetried(t *testing.T) {
	admin := adminConn(t, "")
	if _, err := admin.exec("SET GLOBAL innodb_lock_wait_timeout=1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.exec("SET GLOBAL innodb_lock_wait_timeout=DEFAULT") })
	tests := []struct {
		name    string
		ignore  []uint16
		wantErr string
	}{
		{"ignored by default", DefaultIgnoreErrors, ""},
		{"not ignored", nil, "1205"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSpec(t, "wp_lockwait", 1, 1)
			s.TimeSeconds = u32p(4)
			o := prepared(t, s)
			o.Conn.Ignore = tt.ignore
			holder := adminConn(t, o.Conn.DB)
			for _, q := range []string{"BEGIN", "SELECT id FROM sbtest1 WHERE id=1 FOR UPDATE"} {
				if _, err := holder.queryStrings(q); err != nil {
					t.Fatal(err)
				}
			}
			release := time.AfterFunc(2500*time.Millisecond, func() { _, _ = holder.exec("COMMIT") })
			defer release.Stop()
			sum, _, err := runFor(t, t.Context(), o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--mysql-ignore-errors") {
					t.Fatalf("run = %v; want an error naming %s and --mysql-ignore-errors", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("transactions %d, ignored errors %d", sum.Transactions, sum.IgnoredErrors)
			if sum.IgnoredErrors < 2 || sum.Transactions < 10 {
				t.Errorf("ignored errors %d, transactions %d; want >= 2 timeouts retried, then progress", sum.IgnoredErrors, sum.Transactions)
			}
			assertRowCounts(t, o)
		})
	}
}
