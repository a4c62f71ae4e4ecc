package workload

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
)

// BenchmarkTickUnderLoad: one Tick while goroutines record into their
// own handles without pause (the worker's tick during a busy run), with
// 8 handles spread over 1 ms .. 5 ms; record-p999-ns is the recording
// goroutines' 99.9th percentile Record (the handle's lock held by Tick
// shows there; on 2 cores the scheduler's preemption does too).
func BenchmarkTickUnderLoad(b *testing.B) {
	r := NewRecorder(time.Unix(0, 0))
	const handles = 8
	var stop, measure atomic.Bool
	var wg sync.WaitGroup
	waits := make([]*hist.Histogram, handles)
	for g := range handles {
		h := r.Handle("write")
		waits[g] = hist.New()
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				t0 := time.Now()
				h.Record(int64(1_000_000 + (i*7919+g)%4_000_000))
				if measure.Load() {
					waits[g].Record(int64(time.Since(t0)))
				}
			}
		})
	}
	time.Sleep(10 * time.Millisecond) // spread the histograms' ranges
	measure.Store(true)
	end := time.Unix(0, 0)
	for b.Loop() {
		end = end.Add(time.Second)
		s := r.Tick(end)
		r.Recycle(s)
	}
	stop.Store(true)
	wg.Wait()
	all := hist.New()
	for _, w := range waits {
		_ = all.Merge(w)
	}
	b.ReportMetric(float64(all.Percentile(99.9)), "record-p999-ns")
}
