package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
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
