package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "wp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Check: %v", err)
		}
		s.Close()
	})
	return s
}

func TestRunRoundTrip(t *testing.T) {
	s := openTemp(t)
	var want []*writepathv1.Run
	for i := range 3 {
		r := &writepathv1.Run{
			Id:       fmt.Sprintf("20261130-10000%d.000000", i),
			KindName: "synth",
			State:    writepathv1.RunState_RUN_STATE_FINISHED,
			Created:  timestamppb.New(time.Unix(int64(i), 0)),
			Lost:     []string{"w2"},
		}
		if err := s.PutRun(r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	got, err := s.GetRun(want[1].Id)
	if err != nil || !proto.Equal(got, want[1]) {
		t.Fatalf("GetRun(%s) = %v, %v; want %v", want[1].Id, got, err, want[1])
	}
	list, err := s.ListRuns(2)
	if err != nil || len(list) != 2 || list[0].Id != want[2].Id || list[1].Id != want[1].Id {
		t.Fatalf("ListRuns(2) = %v, %v; want newest two, newest first", list, err)
	}
	if _, err := s.GetRun("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRun(nope) error = %v; want ErrNotFound", err)
	}
}

func TestIntervalsRoundTripAndOrder(t *testing.T) {
	s := openTemp(t)
	// Written out of order: the cursor must return phase, then seq order
	// (big-endian keys), including seq 256 after 2.
	for _, k := range [][2]int{{1, 0}, {0, 256}, {0, 2}, {0, 0}} {
		m := &writepathv1.MergedInterval{RunId: "r", Phase: fmt.Sprint(k[0]), Seq: uint32(k[1])}
		snaps := []WorkerSnapshot{
			{Worker: "b", Interval: &writepathv1.Interval{Seq: uint32(k[1]), Counters: map[string]int64{"ops": 2}}},
			{Worker: "a", Interval: &writepathv1.Interval{Seq: uint32(k[1]), Counters: map[string]int64{"ops": 1}}},
		}
		if err := s.PutInterval("r", k[0], m, snaps); err != nil {
			t.Fatal(err)
		}
	}
	ivs := intervals(t, s, "r")
	var order []string
	for _, m := range ivs {
		order = append(order, fmt.Sprintf("%s/%d", m.Phase, m.Seq))
	}
	if fmt.Sprint(order) != "[0/0 0/2 0/256 1/0]" {
		t.Errorf("Intervals order = %v; want [0/0 0/2 0/256 1/0]", order)
	}
	ws := snapshots(t, s, "r", -1)
	if len(ws) != 8 || ws[0].Worker != "a" || ws[1].Worker != "b" || ws[1].Interval.Counters["ops"] != 2 {
		t.Errorf("WorkerIntervals = %v; want 8 snapshots, a before b", ws)
	}
	if m, err := s.GetInterval("r", 0, 256); err != nil || m.Seq != 256 {
		t.Errorf("GetInterval(r, 0, 256) = %v, %v", m, err)
	}
}

func TestCloseTwice(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "wp.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
	if err := s.PutRun(&writepathv1.Run{Id: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("PutRun after Close = %v; want ErrClosed", err)
	}
}

// TestReopenAfterKill writes from a child process that is killed with
// SIGKILL while it keeps writing, then reopens the file: every committed run
// and interval must be there and the file must pass bbolt's check.
func TestReopenAfterKill(t *testing.T) {
	if path := os.Getenv("STORE_CHILD_DB"); path != "" {
		childWriter(path)
		return
	}
	path := filepath.Join(t.TempDir(), "wp.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestReopenAfterKill$")
	cmd.Env = append(os.Environ(), "STORE_CHILD_DB="+path)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child prints one byte per committed run; kill it mid-stream.
	buf := make([]byte, 20)
	n := 0
	for n < 20 {
		m, err := stdout.Read(buf[n:])
		if err != nil {
			t.Fatalf("child: %v after %d runs", err, n)
		}
		n += m
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Fatalf("Check after kill: %v", err)
	}
	runs, err := s.ListRuns(0)
	if err != nil || len(runs) < 20 {
		t.Fatalf("ListRuns after kill = %d runs, %v; want >= 20", len(runs), err)
	}
	for _, r := range runs {
		ivs := intervals(t, s, r.Id)
		if len(ivs) != 1 || ivs[0].Counters["ops"] != 7 {
			t.Errorf("run %s intervals = %v; want its one interval", r.Id, ivs)
		}
	}
}

func childWriter(path string) {
	s, err := Open(path)
	if err != nil {
		os.Exit(3)
	}
	for i := 0; ; i++ {
		id := fmt.Sprintf("20261130-%06d", i)
		m := &writepathv1.MergedInterval{RunId: id, Counters: map[string]int64{"ops": 7}}
		if s.PutInterval(id, 0, m, nil) != nil || s.PutRun(&writepathv1.Run{Id: id}) != nil {
			os.Exit(4)
		}
		os.Stdout.Write([]byte{'.'})
	}
}
