package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestStatusIntervalMatchesFio: --status-interval=1 on a 3 s job prints
// the report so far every second and then the final one, here as under
// the real fio 3.33: as many JSON documents (within one: the last dump
// and the end race), their I/O counts growing to the final one's; in
// normal output the header once, first, and a job block and group line
// per dump.
func TestStatusIntervalMatchesFio(t *testing.T) {
	fio := fioPath(t)
	args := []string{"--name=s", "--ioengine=null", "--size=1g", "--time_based", "--runtime=3", "--rate_iops=1000", "--status-interval=1"}
	run := func(extra ...string) (theirs, ours string) {
		a := append(append([]string{}, args...), extra...)
		out, err := exec.Command(fio, a...).Output()
		if err != nil {
			t.Fatalf("fio %v: %v", a, err)
		}
		var b, e bytes.Buffer
		if err := RunCommand(context.Background(), a, &b, &e, "t"); err != nil || e.Len() > 0 {
			t.Fatalf("%v: %v, stderr %q", a, err, e.String())
		}
		return string(out), b.String()
	}
	theirs, ours := run("--output-format=json")
	a, b := statusDocs(t, theirs), statusDocs(t, ours)
	t.Logf("read I/Os per document: fio %v, writepath %v", a, b)
	if len(b) < 3 || len(b) > 5 || len(b) < len(a)-1 || len(b) > len(a)+1 {
		t.Errorf("%d JSON documents here, %d from fio; want 3-5 as fio's", len(b), len(a))
	}
	for i := 1; i < len(b); i++ {
		if b[i] < b[i-1] {
			t.Errorf("dump %d counts %d I/Os after %d", i, b[i], b[i-1])
		}
	}
	if last := b[len(b)-1]; last < 2900 || last > 3100 {
		t.Errorf("final document: %d reads; want ~3000 (rate_iops=1000 for 3 s)", last)
	}
	theirs, ours = run()
	for who, out := range map[string]string{"fio": theirs, "writepath": ours} {
		groups, jobs := strings.Count(out, "Run status group 0"), strings.Count(out, "s: (groupid=0")
		if !strings.HasPrefix(out, "s: (g=0): rw=read") || strings.Count(out, "Starting 1 process") != 1 || groups != jobs || groups < 3 {
			t.Errorf("%s normal output: header first and once, a job block per group line (%d, %d), 3+ reports:\n%.400s", who, jobs, groups, out)
		}
	}
}

// statusDocs is the read total_ios of each JSON document in out.
func statusDocs(t *testing.T, out string) []int64 {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var counts []int64
	for {
		var doc struct {
			Jobs []struct {
				Read struct {
					TotalIOs int64 `json:"total_ios"`
				} `json:"read"`
			} `json:"jobs"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil || len(doc.Jobs) == 0 {
			t.Fatalf("document %d: %v\n%.300s", len(counts)+1, err, out)
		}
		counts = append(counts, doc.Jobs[0].Read.TotalIOs)
	}
	return counts
}
