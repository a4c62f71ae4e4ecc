package workload

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkTick: one Tick of a busy interval, 64 handles (an oltp run's
// threads) each holding 500 values spread over 100 µs .. 100 ms, the
// range a loaded server's transactions populate. Filling is untimed;
// tick-cpu-ns is the Tick's own thread CPU time, which a busy machine's
// other processes disturb less than the wall clock.
func BenchmarkTick(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := NewRecorder(time.Unix(0, 0))
	hs := make([]*Handle, 64)
	for i := range hs {
		hs[i] = r.Handle("trx")
	}
	end := time.Unix(0, 0)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		for g, h := range hs {
			for i := range 500 {
				h.Record(100_000 + int64((i*7919+g*104729)%100_000_000))
			}
		}
		b.StartTimer()
		t0 := threadCPU()
		end = end.Add(time.Second)
		s := r.Tick(end)
		cpu += threadCPU() - t0
		r.Recycle(s)
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "tick-cpu-ns")
}

// cpuPerOp locks the benchmark to its thread and returns what reports
// the thread's CPU time per op (cpu-ns/op) once the loop is done: other
// processes on a busy machine disturb it far less than the wall clock.
func cpuPerOp(b *testing.B) (done func()) {
	runtime.LockOSThread()
	t0 := threadCPU()
	return func() {
		b.ReportMetric(float64(threadCPU()-t0)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
