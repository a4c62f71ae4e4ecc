package oltp

import (
	"context"
	"testing"
	"time"

	"github.com/writepath/writepath/workload"
)

// TestSetUpConnectsBeforeRun: SetUp opens the run's connections (the
// worker then reports the phase ready); Run uses them and logs in no
// other; a phase that never runs closes them when its context ends.
func TestSetUpConnectsBeforeRun(t *testing.T) {
	s := testSpec(t, "wp_setup", 1, 200)
	s.Threads, s.TimeSeconds = u32p(4), u32p(1)
	prepared(t, s)
	admin := adminConn(t, "")
	status := func(name string) int64 {
		return queryInt(t, admin, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='"+name+"'")
	}
	// connectedSettles waits for the server to list want connections on
	// the test's database (a closed one leaves a moment later).
	inDB := func() int64 {
		return queryInt(t, admin, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = 'wp_setup'")
	}
	connectedSettles := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for inDB() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections on wp_setup; want %d", inDB(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	const base = 0

	w, err := NewFromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	w.NoStatus = true // the status sampler's own connection is not the point here
	if err := w.SetUp(t.Context(), PhaseRun, workload.Env{}); err != nil {
		t.Fatal(err)
	}
	connectedSettles(base + 4)
	logins := status("CONNECTIONS")
	if err := w.Run(t.Context(), PhaseRun, workload.Env{Start: time.Now()}, workload.NewRecorder(time.Now())); err != nil {
		t.Fatal(err)
	}
	if sum := w.RunSummary(); sum == nil || sum.Transactions == 0 {
		t.Fatalf("summary %+v; want transactions", sum)
	}
	if n := status("CONNECTIONS") - logins; n != 0 {
		t.Errorf("Run logged in %d more connections; want the 4 SetUp opened, none new", n)
	}
	connectedSettles(base)

	// Set up, never run: the phase's context ends and frees them.
	w, err = NewFromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	if err := w.SetUp(ctx, PhaseRun, workload.Env{}); err != nil {
		t.Fatal(err)
	}
	connectedSettles(base + 4)
	cancel()
	connectedSettles(base)

	// Phases other than run, and dry runs, open nothing.
	for _, phase := range []string{PhasePrepare, PhaseCleanup} {
		if err := w.SetUp(t.Context(), phase, workload.Env{}); err != nil || w.takeSessions() != nil {
			t.Errorf("SetUp(%s) = %v; want nil and nothing opened", phase, err)
		}
	}
}
