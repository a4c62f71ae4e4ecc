package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestReleasedPagesReadTheSame: the open check's walk gives the same verdict
// when the mapping's pages are released after every page it reads (what a
// large store does every 64 MiB), on a sound store and on damaged copies;
// and a store whose pages were released after Open reads the same records.
func TestReleasedPagesReadTheSame(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	realStore(t, orig)
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	check := func(data []byte, each int) string {
		f := filepath.Join(dir, "case.db")
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fd, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		m, err := unix.Mmap(int(fd.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(m)
		if err := checkMapped(m, each); err != nil {
			return err.Error()
		}
		return "ok"
	}
	if got := check(b, 1); got != "ok" {
		t.Fatalf("checkMapped(sound store, release after every page) = %s; want ok", got)
	}
	for p := 2; p < len(b)/page; p++ {
		c := bytes.Clone(b)
		for i := p * page; i < p*page+64; i++ {
			c[i] ^= 0x5a
		}
		if kept, released := check(c, releaseEvery), check(c, 1); kept != released {
			t.Errorf("page %d damaged: checkMapped = %q kept, %q released after every page", p, kept, released)
		}
	}

	st, err := Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before, err := st.ListRuns(0)
	if err != nil {
		t.Fatal(err)
	}
	release(st.mapping())
	after, err := st.ListRuns(0)
	if err != nil || len(after) != len(before) || len(before) == 0 {
		t.Fatalf("ListRuns after release = %d runs, %v; want the %d before", len(after), err, len(before))
	}
	for i := range before {
		if !proto.Equal(before[i], after[i]) {
			t.Errorf("run %d after release = %v; want %v", i, after[i], before[i])
		}
	}
}

// TestReadingKeepsFilePagesBounded: walking every worker snapshot of a store
// far bigger than one scan batch leaves about a batch of the file's pages
// resident in bbolt's mapping (its Rss in /proc/self/smaps), not the file.
// A control walk in one transaction without release shows the measure
// works here: it must make most of the file resident, or the test skips.
func TestReadingKeepsFilePagesBounded(t *testing.T) {
	const (
		intervals = 120 // x 100 workers x ~4 KiB: a ~48 MiB file
		bound     = 16 << 20
	)
	path := filepath.Join(t.TempDir(), "big.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := bytes.Repeat([]byte{7}, 2300)
	id := "20261201-210000.000000"
	for seq := range uint32(intervals) {
		snaps := make([]WorkerSnapshot, 100)
		for w := range snaps {
			snaps[w] = WorkerSnapshot{Worker: fmt.Sprintf("w%03d", w), Interval: &writepathv1.Interval{Seq: seq, Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: hdr}}}}
		}
		if err := s.PutInterval(id, 0, &writepathv1.MergedInterval{Seq: seq}, snaps); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := s.db.Info().Data
	rss := func() int64 {
		n, ok := mappingRss(t, addr)
		if !ok {
			t.Skip("no /proc/self/smaps entry for bbolt's mapping")
		}
		return n
	}
	if n := rss(); n > bound {
		t.Errorf("after Open the mapping holds %d bytes resident; want <= %d", n, bound)
	}
	n, peak := 0, int64(0)
	err = s.WorkerIntervals(id, -1, func(_ int, sn WorkerSnapshot) error {
		if n++; n%200 == 0 {
			peak = max(peak, rss())
		}
		return nil
	})
	if err != nil || n != intervals*100 {
		t.Fatalf("WorkerIntervals = %d snapshots, %v; want %d", n, err, intervals*100)
	}
	end := rss()
	t.Logf("file %d bytes; mapping Rss peak %d during the walk, %d after", st.Size(), peak, end)
	if peak > bound || end > bound {
		t.Errorf("reading %d bytes of snapshots left %d bytes resident at peak, %d after; want <= %d", st.Size(), peak, end, bound)
	}

	// Control: the same walk in one transaction, nothing released.
	sum := 0
	if err := s.view(func(tx *bolt.Tx) error {
		return bucketAt(tx, append(runPath(id), bucketRunWorkers)).ForEach(func(k, v []byte) error {
			sum += int(v[len(v)/2])
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	c := rss()
	t.Logf("control walk in one transaction: %d bytes resident", c)
	if c < st.Size()/2 {
		t.Skipf("an unreleased walk left only %d of %d bytes resident: Rss does not measure this here (sum %d)", c, st.Size(), sum)
	}
}

// mappingRss is the Rss of the mapping starting at addr in /proc/self/smaps.
func mappingRss(t *testing.T, addr uintptr) (int64, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	start := fmt.Sprintf("%x-", addr)
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, start) {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb); err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
