package workload

import (
	"context"
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
	defer cpuPerOp(b)()
	for i := 0; b.Loop(); i++ {
		h.Record(int64(i & 0xffff))
	}
}

// BenchmarkHandleRecordPair: oltp's open-loop booking, a latency and its
// uncorrected twin under one lock.
func BenchmarkHandleRecordPair(b *testing.B) {
	h := NewRecorder(time.Now()).TwinHandle("trx", "trx_uncorrected")
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for i := 0; b.Loop(); i++ {
		h.RecordPair(int64(i&0xffff)+50_000, int64(i&0xfff)+40_000)
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

// TestViewAgreesWithTicks: a view marked at an interval's end (a warm-up)
// and marked again at the end holds exactly the intervals between, count
// for count and percentile for percentile, while goroutines record.
func TestViewAgreesWithTicks(t *testing.T) {
	start := time.Unix(1000, 0)
	r := NewRecorder(start)
	v := r.NewView(start)
	trx := r.Counter("transactions")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// gate lets the ticker end the warm-up between two transactions, as
	// Tick and Mark are two flushes: what is booked between them would be
	// in the interval after and not in the view.
	var gate sync.RWMutex
	for g := range 4 {
		h := r.TwinHandle("trx", "trx_uncorrected")
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				gate.RLock()
				h.RecordPair(int64(1000+(i*7919+g)%1_000_000), int64(500+i%1000))
				trx.Add(1)
				gate.RUnlock()
			}
		})
	}
	ticked := hist.New()
	var ticks int64
	end := start
	for k := range 40 {
		time.Sleep(time.Millisecond)
		end = end.Add(time.Second)
		if k == 9 { // the warm-up ends with this interval
			gate.Lock()
			r.Tick(end)
			v.Mark(end)
			gate.Unlock()
			continue
		}
		s := r.Tick(end)
		if k > 9 {
			if err := ticked.Merge(s.Ops["trx"]); err != nil {
				t.Fatal(err)
			}
			ticks += s.Counters["transactions"]
		}
	}
	close(stop)
	wg.Wait()
	// Nothing recorded since the last Tick went to it: the next Tick and the
	// view both get the stragglers.
	last := r.Tick(end.Add(time.Second))
	_ = ticked.Merge(last.Ops["trx"])
	ticks += last.Counters["transactions"]
	c := v.Mark(end.Add(time.Second))
	got := c.Op("trx")
	if got.Count() != ticked.Count() || got.Count() == 0 || c.Counters["transactions"] != ticks {
		t.Fatalf("view: %d values, %d transactions; intervals after the mark: %d values, %d transactions",
			got.Count(), c.Counters["transactions"], ticked.Count(), ticks)
	}
	for _, p := range []float64{50, 95, 99, 99.9, 100} {
		if g, w := got.Percentile(p), ticked.Percentile(p); g != w {
			t.Errorf("view p%v = %d; intervals' %d", p, g, w)
		}
	}
	if c.Op("trx_uncorrected").Count() != got.Count() {
		t.Errorf("twin holds %d values; want %d", c.Op("trx_uncorrected").Count(), got.Count())
	}
}

// TestViewHandleStats: a handle's own count, exact sum, min and max in a
// view, its twin's apart, and a released handle's last values kept.
func TestViewHandleStats(t *testing.T) {
	r := NewRecorder(time.Unix(0, 0))
	a, b := r.TwinHandle("trx", "trx_uncorrected"), r.Handle("trx")
	v := r.NewView(time.Unix(0, 0))
	a.RecordPair(1000, 400)
	a.RecordPair(2000, 600) // below 2,048 ns a bucket is one value: min and max exact
	r.Tick(time.Unix(1, 0))
	a.RecordPair(1500, 500)
	b.Record(7000)
	r.Release(b)
	c := v.Mark(time.Unix(2, 0))
	sa, sb := c.Handle(a), c.Handle(b)
	if sa.Count != 3 || sa.Sum != 4500 || sa.Min != 1000 || sa.Max != 2000 || sa.Mean() != 1500 {
		t.Errorf("a = %+v; want 3 values summing 4500, 1000..2000", sa.Stats)
	}
	if sa.Twin.Count != 3 || sa.Twin.Sum != 1500 {
		t.Errorf("a's twin = %+v; want 3 values summing 1500", sa.Twin)
	}
	if sb.Count != 1 || sb.Sum != 7000 || c.Op("trx").Count() != 4 {
		t.Errorf("released b = %+v, trx %d values; want b's one value kept, 4 in all", sb.Stats, c.Op("trx").Count())
	}
	if c := v.Mark(time.Unix(3, 0)); c.Op("trx").Count() != 0 || c.Handle(a).Count != 0 {
		t.Errorf("after a mark: %d values; want none", c.Op("trx").Count())
	}
	if s := r.Tick(time.Unix(4, 0)); s.Ops["trx"].Count() != 2 { // a's 1500 and b's 7000 were after the first Tick
		t.Errorf("second interval holds %d trx; want 2", s.Ops["trx"].Count())
	}
}

func TestRecordPairDoesNotAllocate(t *testing.T) {
	h := NewRecorder(time.Now()).TwinHandle("trx", "trx_uncorrected")
	if n := testing.AllocsPerRun(1000, func() { h.RecordPair(5000, 4000) }); n != 0 {
		t.Errorf("Handle.RecordPair allocates %v times; want 0", n)
	}
}

// TestSeriesHandle: a handle's series under one lock, as fio books an
// I/O (clat in the intervals; lat and slat local to views): the
// intervals hold only the operation's series, a handle view each
// handle's histograms and exact sums per series, an unused slot and a
// value past n nothing.
func TestSeriesHandle(t *testing.T) {
	r := NewRecorder(time.Unix(0, 0))
	v := r.NewHandleView(time.Unix(0, 0))
	async := r.SeriesHandle([MaxSeries]Series{{Name: "write"}, {Name: "write_lat", Local: true}, {Name: "write_slat", Local: true}})
	psync := r.SeriesHandle([MaxSeries]Series{{Name: "write"}, {Name: "write_lat", Local: true}}) // no slat slot
	async.RecordSeries([MaxSeries]int64{1000, 1200, 200}, 3)
	async.RecordSeries([MaxSeries]int64{1500, 1600, 100}, 3)
	psync.RecordSeries([MaxSeries]int64{900, 950, 50}, 3) // slat dropped: no slot
	psync.RecordSeries([MaxSeries]int64{800, 850, 50}, 1) // lat left out: n = 1
	s := r.Tick(time.Unix(1, 0))
	if len(s.Ops) != 1 || s.Ops["write"].Count() != 4 {
		t.Fatalf("interval ops %v, %d writes; want only write, 4 values", s.OpNames(), s.Ops["write"].Count())
	}
	async.RecordSeries([MaxSeries]int64{2000, 2100, 100}, 3)
	c := v.Mark(time.Unix(2, 0))
	for _, w := range []struct {
		h          *Handle
		i          int
		count, sum int64
	}{
		{async, 0, 3, 4500}, {async, 1, 3, 4900}, {async, 2, 3, 400},
		{psync, 0, 2, 1700}, {psync, 1, 1, 950}, {psync, 2, 0, 0},
	} {
		st, h := c.Series(w.h, w.i), c.SeriesHistogram(w.h, w.i)
		if st.Count != w.count || st.Sum != w.sum || h.Count() != w.count {
			t.Errorf("handle %d series %d: %+v, histogram of %d; want %d values summing %d", w.h.idx, w.i, st, h.Count(), w.count, w.sum)
		}
	}
	if c.Op("write").Count() != 5 || c.Op("write_lat").Count() != 4 || c.Op("write_slat").Count() != 3 {
		t.Errorf("view: write %d, lat %d, slat %d; want 5, 4, 3", c.Op("write").Count(), c.Op("write_lat").Count(), c.Op("write_slat").Count())
	}
	if plain := r.NewView(time.Unix(2, 0)); plain.Mark(time.Unix(3, 0)).SeriesHistogram(async, 0).Count() != 0 {
		t.Error("a plain view kept a handle's histogram")
	}
}

func TestRecordSeriesDoesNotAllocate(t *testing.T) {
	h := NewRecorder(time.Now()).SeriesHandle([MaxSeries]Series{{Name: "read"}, {Name: "read_lat", Local: true}, {Name: "read_slat", Local: true}})
	if n := testing.AllocsPerRun(1000, func() { h.RecordSeries([MaxSeries]int64{5000, 6000, 1000}, 3) }); n != 0 {
		t.Errorf("Handle.RecordSeries allocates %v times; want 0", n)
	}
}

// BenchmarkHandleRecordSeries: fio's booking of one asynchronous I/O,
// clat, lat and slat under one lock.
func BenchmarkHandleRecordSeries(b *testing.B) {
	h := NewRecorder(time.Now()).SeriesHandle([MaxSeries]Series{{Name: "write"}, {Name: "write_lat", Local: true}, {Name: "write_slat", Local: true}})
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for i := int64(0); b.Loop(); i++ {
		clat := 50_000 + (i&0xffff)*10
		h.RecordSeries([MaxSeries]int64{clat, clat + 2000, 2000}, 3)
	}
}

// TestDrive: every value the phase recorded is in the intervals Drive
// hands over, the last one included, in order.
func TestDrive(t *testing.T) {
	w := driveFunc(func(ctx context.Context, rec *Recorder) error {
		h := rec.Handle("op")
		for i := range 50 {
			h.Record(int64(i + 1))
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	var n int64
	var last time.Time
	err := Drive(t.Context(), w, "run", Env{Start: time.Now()}, 10*time.Millisecond, func(s Snapshot) {
		if s.Start.Before(last) {
			t.Errorf("interval starting %v after one ending %v", s.Start, last)
		}
		last = s.End
		n += s.Ops["op"].Count()
	})
	if err != nil || n != 50 {
		t.Errorf("Drive = %v, %d values in its intervals; want nil, 50", err, n)
	}
}

type driveFunc func(ctx context.Context, rec *Recorder) error

func (f driveFunc) Run(ctx context.Context, _ string, _ Env, rec *Recorder) error { return f(ctx, rec) }
