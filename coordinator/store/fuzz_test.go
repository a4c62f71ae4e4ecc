package store

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// tinyStore is a real store of a few pages: a run with two intervals and
// a worker's snapshot, a worker, a campaign.
func tinyStore(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	id := "20261130-100000.000"
	if err := s.PutRun(&writepathv1.Run{Id: id, KindName: "fio", Created: timestamppb.New(time.Unix(1, 0))}); err != nil {
		t.Fatal(err)
	}
	for seq := range uint32(2) {
		err := s.PutInterval(id, 0, &writepathv1.MergedInterval{Seq: seq, Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: []byte("hdr")}}},
			[]WorkerSnapshot{{Worker: "w1", Interval: &writepathv1.Interval{RunId: id, Seq: seq}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutWorker(&writepathv1.WorkerInfo{Name: "w1", Labels: map[string]string{"disk": "nvme"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCampaign(&writepathv1.Campaign{Id: "c-20261130-100000.000", Plan: &writepathv1.CampaignPlan{Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows the file ahead of use; the pages below the high-water
	// mark are the store (a small input fuzzes faster).
	m, err := readMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	return b[:m.pgid*uint64(m.pageSize)]
}

// FuzzOpen decodes store files: whatever the bytes, opening and reading
// everything either works or fails with a CorruptError (or an open error)
// naming the file, and never panics.
func FuzzOpen(f *testing.F) {
	f.Add(tinyStore(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- readAll(path) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("the read did not return in 10 s:\n%s", buf[:runtime.Stack(buf, true)])
		}
		if err == nil || errors.Is(err, ErrCorrupt) {
			return
		}
		if msg := err.Error(); !containsPath(msg, path) {
			t.Fatalf("error %q does not name %s", msg, path)
		}
	})
}

func containsPath(msg, path string) bool {
	for i := 0; i+len(path) <= len(msg); i++ {
		if msg[i:i+len(path)] == path {
			return true
		}
	}
	return false
}
