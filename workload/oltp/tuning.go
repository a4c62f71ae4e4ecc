package oltp

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The run phase's clients hold a P each while they wait for the server
// (client.go), and a stop-the-world waits for every one of them to come
// out of its ppoll(2): each collection stops the clients twice, for as long
// as the slowest answer in flight takes (up to pollTimeout) or, on a busy
// machine, as long as the slowest client thread takes to get a CPU back
// (gctrace, 8 threads, trx_commit=1, load 12-35: 459 ms once). What
// allocates during the load is the fabric beside it (the embedded
// coordinator's merges, the tracer's pages, gRPC: ~1.7 MB/s at 64
// threads), not the clients; at the default GOGC=100 with the small heap
// of 8 threads (6-8 MB live after the set-up's collection) that was a
// collection every ~2 s. So while clients run, the collector is let grow
// the heap by gcHeadroom over what is live before it runs, instead of by
// the heap's own size: one collection in ~40 s instead of ~5 in 10 s.

// gcHeadroom is how far the heap may grow past the live heap before the
// collector runs, during the load; gcMaxPercent bounds the GC percent that
// gives it (a nearly empty heap: at most gcMaxPercent/100 times live).
const (
	gcHeadroom   = 64 << 20
	gcMaxPercent = 800
)

// tuning is the run phase's process-wide runtime settings, GOMAXPROCS and
// the GC percent: the runtime's, so one per process. Loops of several
// workers in one process (an embedded fabric's --local-workers) share them;
// the last to end restores what was before the first.
var tuning struct {
	sync.Mutex
	loops   int // loops running
	clients int // their clients
	procs   int // GOMAXPROCS before the first
	gc      int // GC percent before the first; gcUnchanged if left alone
}

const gcUnchanged = -2

// tuneRuntime raises GOMAXPROCS so that every client can hold a P while it
// waits for its answer, with as many again as there were for everything
// else, and the collector's target (gcPercentFor), unless the user chose
// it (GOGC); it returns what undoes its part. Idle Ps cost nothing.
func tuneRuntime(clients int) (restore func()) {
	tuning.Lock()
	defer tuning.Unlock()
	if tuning.loops == 0 {
		tuning.procs = runtime.GOMAXPROCS(0)
		tuning.gc = gcUnchanged
		if os.Getenv("GOGC") == "" {
			if p := gcPercentFor(liveHeap()); p > 100 {
				tuning.gc = debug.SetGCPercent(p)
			}
		}
	}
	tuning.loops++
	tuning.clients += clients
	setProcs(tuning.procs + tuning.clients)
	return func() {
		tuning.Lock()
		defer tuning.Unlock()
		tuning.loops--
		tuning.clients -= clients
		if tuning.loops > 0 {
			setProcs(tuning.procs + tuning.clients)
			return
		}
		setProcs(tuning.procs)
		if tuning.gc != gcUnchanged {
			debug.SetGCPercent(tuning.gc)
		}
	}
}

// setProcs sets GOMAXPROCS to n if it is not n (a change stops the world).
func setProcs(n int) {
	if runtime.GOMAXPROCS(0) != n {
		runtime.GOMAXPROCS(n)
	}
}

// gcPercentFor is the GC percent that lets a heap of live bytes grow by
// gcHeadroom, at least the default 100 and at most gcMaxPercent.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	p := (gcHeadroom*100 + live - 1) / live
	return int(min(max(p, 100), gcMaxPercent))
}

// liveHeap is the heap the last collection found live (0 if unknown).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
