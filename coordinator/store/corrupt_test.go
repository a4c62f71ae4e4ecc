package store

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// readerEnv makes the test binary a reader of store files: given "DIR N
// FROM", it opens DIR/caseI.db for I = FROM..N-1 in turn, reads everything
// the CLI and the coordinator read, and prints "I ok" or "I error: ..."
// per file; a panic or a fault ends the process, and the parent sees which
// file did it.
const readerEnv = "STORE_TEST_READER"

func TestMain(m *testing.M) {
	if v := os.Getenv(readerEnv); v != "" {
		var dir string
		var n, from int
		fmt.Sscan(v, &dir, &n, &from)
		for i := from; i < n; i++ {
			fmt.Printf("%d start\n", i)
			if err := readAll(filepath.Join(dir, fmt.Sprintf("case%d.db", i))); err != nil {
				fmt.Printf("%d error: %s\n", i, strings.ReplaceAll(err.Error(), "\n", "\\n"))
			} else {
				fmt.Printf("%d ok\n", i)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readAll is what `writepath runs list`, `runs show` and a coordinator's
// start read from a store.
func readAll(path string) error {
	s, err := Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := s.ListRuns(0)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if err := s.Intervals(r.GetId(), func(int, *writepathv1.MergedInterval) error { return nil }); err != nil {
			return err
		}
		if err := s.WorkerIntervals(r.GetId(), -1, func(int, WorkerSnapshot) error { return nil }); err != nil {
			return err
		}
		if err := s.WorkerTotals(r.GetId(), func(int, *writepathv1.WorkerTotal) error { return nil }); err != nil {
			return err
		}
	}
	if _, err := s.Workers(); err != nil {
		return err
	}
	_, err = s.ListCampaigns(0)
	return err
}

// realStore writes a store as a coordinator does: runs, intervals with
// per-worker snapshots, workers, a campaign. It is a few hundred pages.
func realStore(t testing.TB, path string) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for r := range 6 {
		id := fmt.Sprintf("20261130-1000%02d.000", r)
		run := &writepathv1.Run{Id: id, KindName: "fio", State: writepathv1.RunState_RUN_STATE_FINISHED,
			Created: timestamppb.New(time.Unix(int64(r), 0)), Reason: strings.Repeat("r", 300)}
		if err := s.PutRun(run); err != nil {
			t.Fatal(err)
		}
		for seq := range uint32(20) {
			m := &writepathv1.MergedInterval{Seq: seq, Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: bytes.Repeat([]byte{byte(seq)}, 600)}}}
			var snaps []WorkerSnapshot
			for w := range 8 {
				snaps = append(snaps, WorkerSnapshot{Worker: fmt.Sprintf("w%d", w), Interval: &writepathv1.Interval{RunId: id, Seq: seq,
					Ops: []*writepathv1.OpHistogram{{Op: "write", Hdr: bytes.Repeat([]byte{byte(w)}, 300)}}}})
			}
			if err := s.PutInterval(id, 0, m, snaps); err != nil {
				t.Fatal(err)
			}
		}
	}
	for w := range 8 {
		if err := s.PutWorker(&writepathv1.WorkerInfo{Name: fmt.Sprintf("w%d", w), Labels: map[string]string{"disk": "nvme"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutCampaign(&writepathv1.Campaign{Id: "c-20261130-100000.000", Plan: &writepathv1.CampaignPlan{Name: "x", SpecText: strings.Repeat("s", 5000)}}); err != nil {
		t.Fatal(err)
	}
}

// readInChild reads dir's cases from..n-1 in a child process and returns
// each case's line; a case the child died on gets "died: " and the output
// after its start.
func readInChild(t *testing.T, dir string, n int) map[int]string {
	lines := map[int]string{}
	for from := 0; from < n; {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", readerEnv, dir, n, from))
		out, err := cmd.CombinedOutput()
		last := from
		rest := string(out)
		for rest != "" {
			var line string
			line, rest, _ = strings.Cut(rest, "\n")
			var i int
			var what string
			if k, _ := fmt.Sscanf(line, "%d %s", &i, &what); k != 2 {
				continue
			}
			if what == "start" {
				last = i
				continue
			}
			lines[i] = strings.TrimPrefix(line, fmt.Sprintf("%d ", i))
		}
		if err == nil {
			break
		}
		_, after, _ := strings.Cut(string(out), fmt.Sprintf("%d start\n", last))
		lines[last] = fmt.Sprintf("died (%v): %.600s", err, after)
		from = last + 1
	}
	return lines
}

// TestCorruptPagesNeverPanic corrupts every page of a real store file, one
// at a time (and truncates it), and reads each copy in a child process as
// `runs list` and a coordinator would: each must read fine or fail with one
// line naming the file, never panic or fault.
func TestCorruptPagesNeverPanic(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	realStore(t, orig)
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	pages := len(b) / page
	t.Logf("store: %d bytes, %d pages", len(b), pages)
	var cases []struct {
		name string
		data []byte
	}
	for p := range pages {
		c := bytes.Clone(b)
		for i := p * page; i < (p+1)*page; i++ {
			c[i] ^= byte(0x5a + i)
		}
		cases = append(cases, struct {
			name string
			data []byte
		}{fmt.Sprintf("page %d", p), c})
	}
	for _, n := range []int{0, 100, page, 2 * page, 3*page + 17, len(b) / 2, len(b) - page} {
		cases = append(cases, struct {
			name string
			data []byte
		}{fmt.Sprintf("truncated to %d", n), b[:n]})
	}
	for i, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("case%d.db", i)), c.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lines := readInChild(t, dir, len(cases))
	bad, errs := 0, 0
	for i, c := range cases {
		out, path := lines[i], filepath.Join(dir, fmt.Sprintf("case%d.db", i))
		switch {
		case strings.HasPrefix(out, "died"):
			bad++
			if bad <= 5 {
				t.Errorf("%s: the reader %s", c.name, out)
			}
		case out == "ok":
		case !strings.HasPrefix(out, "error: ") || !strings.Contains(out, path):
			t.Errorf("%s: %q; want one line naming %s", c.name, out, path)
		default:
			errs++
			if errs <= 3 || strings.HasPrefix(c.name, "truncated") {
				t.Logf("%s: %s", c.name, out)
			}
		}
	}
	t.Logf("%d cases: %d read with a one-line error, %d died", len(cases), errs, bad)
	if bad > 0 {
		t.Errorf("%d of %d corruptions made the reader die", bad, len(cases))
	}
}
