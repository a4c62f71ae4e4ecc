package workload

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
)

// TestRecorderConcurrentExact records from many goroutines while ticking and
// checks that the intervals together hold exactly every recorded value.
func TestRecorderConcurrentExact(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(start)
	const goroutines, perG = 8, 20_000
	want := hist.New()
	for g := 0; g < goroutines; g++ {
		for i := 0; i < perG; i++ {
			want.Record(int64(g*perG + i + 1))
		}
	}
	ops := r.Counter("ops")
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		h := r.Handle("write")
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				h.Record(int64(g*perG + i + 1))
				ops.Add(1)
			}
		}(g)
	}
	got := hist.New()
	var total int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	end := start
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		case <-time.After(time.Millisecond):
		}
		end = end.Add(time.Second)
		s := r.Tick(end)
		if err := got.Merge(s.Ops["write"]); err != nil {
			t.Fatal(err)
		}
		total += s.Counters["ops"]
	}
	if got.Count() != want.Count() || total != goroutines*perG {
		t.Fatalf("intervals hold %d values, counter %d; want %d", got.Count(), total, want.Count())
	}
	for _, p := range []float64{50, 99, 99.9, 100} {
		if g, w := got.Percentile(p), want.Percentile(p); g != w {
			t.Errorf("merged intervals p%v = %d; want %d", p, g, w)
		}
	}
}

func TestTickReportsIdleOpsAndGauges(t *testing.T) {
	start := time.Unix(0, 0)
	r := NewRecorder(start)
	r.Handle("commit")
	r.Gauge("threads").Set(4)
	s := r.Tick(start.Add(time.Second))
	if h, ok := s.Ops["commit"]; !ok || h.Count() != 0 {
		t.Errorf("Tick().Ops[commit] = %v, %v; want an empty histogram", h, ok)
	}
	if s.Gauges["threads"] != 4 || !s.Start.Equal(start) || !s.End.Equal(start.Add(time.Second)) {
		t.Errorf("Tick() = %+v; want threads=4 over [0s,1s)", s)
	}
}

func TestHandleRecordDoesNotAllocate(t *testing.T) {
	h := NewRecorder(time.Now()).Handle("write")
	if n := testing.AllocsPerRun(1000, func() { h.Record(5000) }); n != 0 {
		t.Errorf("Handle.Record allocates %v times; want 0", n)
	}
}

func BenchmarkHandleRecord(b *testing.B) {
	h := NewRecorder(time.Now()).Handle("write")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(int64(i & 0xffff))
	}
}

// TestRecycle: recycled histograms come back empty, and a steady Tick,
// Recycle loop allocates no histogram.
func TestRecycle(t *testing.T) {
	r := NewRecorder(time.Unix(0, 0))
	h := r.Handle("op")
	h.Record(5)
	s := r.Tick(time.Unix(1, 0))
	if s.Ops["op"].Count() != 1 {
		t.Fatalf("first interval count %d; want 1", s.Ops["op"].Count())
	}
	r.Recycle(s)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		h.Record(7)
		s := r.Tick(time.Unix(2, 0))
		if s.Ops["op"].Count() != 1 {
			t.Fatalf("interval count %d; want 1", s.Ops["op"].Count())
		}
		r.Recycle(s)
	}
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b > 100<<10 { // a histogram is 270 KB
		t.Errorf("20 Tick+Recycle allocated %d bytes; want only the snapshots' maps", b)
	}
}
