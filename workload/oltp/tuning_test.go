package oltp

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcMaxPercent},
		{1 << 20, gcMaxPercent}, // 64 MiB over 1 MiB: capped
		{8 << 20, 800},          // 8 threads' heap
		{46 << 20, 140},         // 64 threads' heap: ceil(6400/46)
		{64 << 20, 100},         // headroom = live: the default
		{1 << 30, 100},          // never below the default
		{16 << 20, 400},         // exact
		{(64<<20)/3 + 1, 300},   // rounds up to keep the headroom
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestTuneRuntimeNests: two loops in one process (an embedded fabric with
// two workers) hold a P per client between them, and the last to end
// restores GOMAXPROCS and the GC percent as they were before the first.
func TestTuneRuntimeNests(t *testing.T) {
	t.Setenv("GOGC", "") // the user's choice would be left alone
	procs := runtime.GOMAXPROCS(0)
	gc := debug.SetGCPercent(100)
	defer debug.SetGCPercent(gc)
	undoA := tuneRuntime(3)
	if got := runtime.GOMAXPROCS(0); got != procs+3 {
		t.Fatalf("GOMAXPROCS with 3 clients = %d, want %d", got, procs+3)
	}
	raised := debug.SetGCPercent(-1)
	debug.SetGCPercent(raised)
	if raised <= 100 {
		t.Errorf("GC percent while clients run = %d, want above 100", raised)
	}
	undoB := tuneRuntime(5)
	if got := runtime.GOMAXPROCS(0); got != procs+8 {
		t.Fatalf("GOMAXPROCS with 3+5 clients = %d, want %d", got, procs+8)
	}
	undoA()
	if got := runtime.GOMAXPROCS(0); got != procs+5 {
		t.Fatalf("GOMAXPROCS after the first loop = %d, want %d", got, procs+5)
	}
	undoB()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS after both = %d, want %d", got, procs)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent after both = %d, want 100", got)
	}
}

// TestTuneRuntimeLeavesGOGC: a GOGC the user set is theirs.
func TestTuneRuntimeLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "50")
	gc := debug.SetGCPercent(50)
	defer debug.SetGCPercent(gc)
	undo := tuneRuntime(2)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GC percent with GOGC=50 = %d, want 50", got)
	}
	undo()
}
