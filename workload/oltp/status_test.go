package oltp

import (
	"testing"
	"time"
)

// TestRunSetsInnoDBGauges: the run phase reads the server's InnoDB status
// beside the load and leaves it in the Recorder's gauges, so it rides on
// the intervals (the worker cannot read MySQL itself).
func TestRunSetsInnoDBGauges(t *testing.T) {
	s := testSpec(t, "wp_status", 1, 500)
	s.Threads, s.TimeSeconds = u32p(2), u32p(2)
	o := prepared(t, s)
	_, rec, err := runFor(t, t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	g := rec.Tick(time.Now()).Gauges
	for _, name := range []string{"innodb.lsn", "innodb.pages_dirty", "innodb.checkpoint_age_bytes", "innodb.log_waits"} {
		if _, ok := g[name]; !ok {
			t.Errorf("gauge %s missing after the run phase; gauges %v", name, g)
		}
	}
	if g["innodb.lsn"] <= 0 {
		t.Errorf("innodb.lsn = %d; want the server's LSN", g["innodb.lsn"])
	}
}
