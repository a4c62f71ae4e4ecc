package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// BenchmarkOpen times Open's check on a store of STORE_BENCH_MB (default
// 64) MiB of per-worker snapshots: 100 workers x 2.3 KB per interval, as
// the 1,000-worker fleet writes ten times over. It reports the file size
// and the check's cost per MiB.
func BenchmarkOpen(b *testing.B) {
	mb := 64
	if v := os.Getenv("STORE_BENCH_MB"); v != "" {
		fmt.Sscan(v, &mb)
	}
	path := filepath.Join(b.TempDir(), "big.db")
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	hdr := bytes.Repeat([]byte{7}, 2300)
	perInterval := 100 * len(hdr)
	for seq := uint32(0); int(seq)*perInterval < mb<<20; seq++ {
		snaps := make([]WorkerSnapshot, 100)
		for w := range snaps {
			snaps[w] = WorkerSnapshot{Worker: fmt.Sprintf("w%03d", w), Interval: &writepathv1.Interval{Seq: seq, Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: hdr}}}}
		}
		if err := s.PutInterval("20261130-100000.000", 0, &writepathv1.MergedInterval{Seq: seq}, snaps); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	st, _ := os.Stat(path)
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/(float64(st.Size())/(1<<20)), "ms/MiB")
}
