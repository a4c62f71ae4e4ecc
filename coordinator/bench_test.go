package coordinator

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/hist"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// benchWorkers is the fleet size the coordinator is sized for.
const benchWorkers = 1000

// fleetIntervals builds one 1 s interval per worker: 5,000 write latencies
// each (a 5k IOPS host), log-normal around 200 µs with a tail to ~50 ms,
// encoded as a worker would send them (sparse: as this coordinator asks;
// else HDR's V2, as workers before it) and round-tripped through the wire.
func fleetIntervals(b *testing.B, at time.Time, sparse bool) []*writepathv1.Interval {
	rng := rand.New(rand.NewPCG(3, 4))
	out := make([]*writepathv1.Interval, benchWorkers)
	for i := range out {
		vals := make([]int64, 5000)
		for j := range vals {
			vals[j] = int64(200e3 * (0.2 + rng.ExpFloat64()*rng.ExpFloat64()))
		}
		iv := workerInterval(b, 0, at, time.Second, vals)
		if sparse {
			iv.Ops[0].Hdr = sparseOf(b, iv.GetOps()[0].GetHdr())
		}
		wire, err := proto.Marshal(iv)
		if err != nil {
			b.Fatal(err)
		}
		iv = &writepathv1.Interval{}
		if err := proto.Unmarshal(wire, iv); err != nil {
			b.Fatal(err)
		}
		out[i] = iv
	}
	return out
}

// BenchmarkMergePersist1000Workers measures one 1 s interval from 1,000
// workers through the real path: validate and decode each worker's
// histograms (size and geometry checks), merge exactly, encode the merged
// histogram, and commit the merged interval with all 1,000 worker
// snapshots to bbolt (one fsync), until it is stored. One op = one
// interval. Sub-benchmarks: the workers' histograms in the sparse wire
// encoding (what this coordinator asks for) and in HDR's V2 (workers
// before it).
func BenchmarkMergePersist1000Workers(b *testing.B) {
	b.Run("sparse", func(b *testing.B) { benchMergePersist(b, true) })
	b.Run("hdr-v2", func(b *testing.B) { benchMergePersist(b, false) })
}

func benchMergePersist(b *testing.B, sparse bool) {
	at := time.Unix(1000, 0)
	ivs := fleetIntervals(b, at, sparse)
	names := make([]string, benchWorkers)
	for i := range names {
		names[i] = "worker-" + string(rune('a'+i%26)) + "-" + itoa(i)
	}
	st := tempStore(b)
	stored := make(chan struct{}, 1)
	m := newPhaseMerge("r", "load", 0, at, time.Second, time.Second, st, names,
		func(*writepathv1.MergedInterval) {}, discard())
	m.stored = func([]*writepathv1.MergedInterval) { stored <- struct{}{} }
	var encoded int
	for _, iv := range ivs {
		encoded += len(iv.GetOps()[0].GetHdr())
	}
	b.ReportMetric(float64(encoded)/benchWorkers, "hdr-bytes/worker")
	b.ResetTimer()
	seq := uint32(0)
	// One decoder per worker, as each session has: a worker's snapshot
	// stays in its decoder until its next interval (phaseMerge.settleTotal).
	decs := make([]hist.Decoder, benchWorkers)
	for b.Loop() {
		for i, iv := range ivs {
			iv.Seq = seq
			m.settleTotal(names[i])
			ops, err := decodeInterval(&decs[i], iv)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.add(names[i], iv, ops, at); err != nil {
				b.Fatal(err)
			}
		}
		<-stored // published, and committed by the writer
		seq++
	}
	if n, err := m.flush(); n != seq || err != nil {
		b.Fatalf("flush = %d, %v; want %d intervals", n, err, seq)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
