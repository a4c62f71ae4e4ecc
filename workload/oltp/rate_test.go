package oltp

import (
	"context"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// TestRateModeCorrectsForStall stalls the server for a second with
// FLUSH TABLES WITH READ LOCK during an open-loop run. Measured from the
// intended start, the stall delays every transaction scheduled during
// it; measured from the actual start (uncorrected) it touches only the
// few that were in flight.
func TestRateModeCorrectsForStall(t *testing.T) {
	s := testSpec(t, "wp_rate", 2, 1000)
	s.Threads, s.TimeSeconds, s.Rate = u32p(2), u32p(4), 200
	o := prepared(t, s)
	lock := adminConn(t, "")
	go func() {
		time.Sleep(1200 * time.Millisecond)
		if _, err := lock.exec("FLUSH TABLES WITH READ LOCK"); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(time.Second)
		if _, err := lock.exec("UNLOCK TABLES"); err != nil {
			t.Error(err)
		}
	}()
	rec := workload.NewRecorder(time.Now())
	sum, err := Run(t.Context(), o, workload.Env{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	snap := rec.Tick(time.Now())
	corr, uncorr := snap.Ops["trx"], snap.Ops["trx_uncorrected"]
	if corr == nil || uncorr == nil || corr.Count() != uncorr.Count() {
		t.Fatalf("recorder ops %v; want trx and trx_uncorrected with equal counts", snap.OpNames())
	}
	p90c, p90u := time.Duration(corr.Percentile(90)), time.Duration(uncorr.Percentile(90))
	t.Logf("transactions %d, late %d; p90 corrected %v, uncorrected %v; max %v / %v",
		sum.Transactions, sum.Late, p90c, p90u, time.Duration(corr.Max()), time.Duration(uncorr.Max()))
	// About 200 of ~800 transactions were scheduled inside the stall.
	if p90c < 200*time.Millisecond || p90u > 100*time.Millisecond || p90c < 4*p90u {
		t.Errorf("p90 corrected %v, uncorrected %v; want the stall (~1 s) in the corrected one only", p90c, p90u)
	}
	if sum.Late < 50 || snap.Counters["late"] != sum.Late {
		t.Errorf("late = %d (counter %d); want the stalled schedule counted", sum.Late, snap.Counters["late"])
	}
	if sum.Uncorrected == nil {
		t.Error("summary has no uncorrected latency section in rate mode")
	}
	// The run catches up after the stall only if the server can go faster
	// than the rate: two threads at their uncorrected mean latency. A
	// loaded CI host's server managed 107/s (p90 11 ms) with 2 threads:
	// there only the ceiling is checked.
	got := float64(sum.Transactions) / 4
	capacity := 2 / (uncorr.Mean() / 1e9)
	if got > 210 {
		t.Errorf("rate %.0f/s; want at most --rate=200", got)
	}
	if capacity < 300 {
		t.Logf("rate %.0f/s; the server did %.0f/s at most (2 threads at a %.1f ms mean): not enough to catch up, the floor is not checked",
			got, capacity, uncorr.Mean()/1e6)
	} else if got < 150 {
		t.Errorf("rate %.0f/s with room for %.0f/s; want about --rate=200 (the run catches up after the stall)", got, capacity)
	}
}

// TestCancelUnblocksStalledRun cancels a run whose threads wait on a
// global read lock: it must return within a second.
func TestCancelUnblocksStalledRun(t *testing.T) {
	s := testSpec(t, "wp_cancel", 1, 100)
	s.Threads, s.TimeSeconds = u32p(2), u32p(60)
	o := prepared(t, s)
	lock := adminConn(t, "")
	if _, err := lock.exec("FLUSH TABLES WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	defer lock.exec("UNLOCK TABLES")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	if _, _, err := runFor(t, ctx, o); err != nil {
		t.Errorf("cancelled run = %v; want nil", err)
	}
	if took := time.Since(start) - 500*time.Millisecond; took > time.Second {
		t.Errorf("run returned %v after cancel; want < 1s", took)
	}
}

// TestRateRunLastsItsTime: with --rate the run lasts --time, as
// sysbench's does, even where the schedule's last slot comes well before
// the end (slots at 0, 0.5, 1.0 and 1.5 s of 1.9 s): its seconds and rates
// are --time's. A dry run needs no server.
func TestRateRunLastsItsTime(t *testing.T) {
	o := Options{Tables: 1, TableSize: 100, Threads: 2, Time: 1900 * time.Millisecond, Rate: 2, Percentile: 95,
		DryRun: true, NoStatus: true, DeleteInserts: 1, IndexUpdates: 1, NonIndexUpdates: 1}
	o.Rand.Seed = 7
	start := time.Now().Add(20 * time.Millisecond)
	sum, err := Run(context.Background(), o, workload.Env{Start: start}, workload.NewRecorder(start))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Transactions != 4 || sum.TotalTimeSec < 1.9 {
		t.Errorf("%d transactions in %.3f s; want 4 (slots at 0, 0.5, 1.0, 1.5 s) in at least 1.9 s", sum.Transactions, sum.TotalTimeSec)
	}
}
