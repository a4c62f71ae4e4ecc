package fabrictest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/workload"
	_ "github.com/writepath/writepath/workload/fio"
)

// TestLocalFioThreeWorkers runs a real fio job (the fio kind, psync
// random writes on temporary files) on three workers over loopback gRPC,
// as `writepath run fio --local-workers 3` does, and checks the summary:
// merged totals equal the sum of the workers' own, and every worker shipped
// fio's JSON summary, whose counts and percentiles are the fabric's.
func TestLocalFioThreeWorkers(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 3})
	meta, ok := workload.ByName("fio")
	if !ok {
		t.Fatal("fio kind not registered")
	}
	b, err := meta.FromArgs([]string{"--name=t", "--rw=randwrite", "--bs=4k", "--size=2M",
		"--runtime=1", "--time_based", "--ioengine=psync"})
	if err != nil {
		t.Fatal(err)
	}
	spec := &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: meta.Kind, Value: b}, Interval: durationpb.New(200 * time.Millisecond)}
	var lines bytes.Buffer
	p := &client.Printer{W: &lines}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := client.New(f.Control()).Run(ctx, spec, p.Event)
	if err != nil || run.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("Run = %v (%s), %v; want FINISHED", run.GetState(), run.GetReason(), err)
	}
	if n := strings.Count(lines.String(), "ops/s"); n < 4 {
		t.Errorf("%d interval lines; want >= 4 for 1 s at 200 ms:\n%s", n, lines.String())
	}
	detail, err := results.Read(ctx, client.New(f.Control()), run.GetId(), results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	s, err := client.Summarize(detail, client.Kind{})
	if err != nil {
		t.Fatal(err)
	}
	ph := s.Phases[len(s.Phases)-1]
	var sum int64
	for _, w := range ph.Workers {
		if len(w.Ops) == 0 || w.Ops[0].Count == 0 {
			t.Fatalf("worker %s wrote nothing: %+v", w.Worker, w)
		}
		sum += w.Ops[0].Count
	}
	if ph.Merged.Ops[0].Count != sum || len(ph.Workers) != 3 {
		t.Errorf("merged count %d over %d workers; want the workers' sum %d over 3", ph.Merged.Ops[0].Count, len(ph.Workers), sum)
	}
	// Each worker's fio JSON and the fabric's totals of that worker are
	// the same writes: the count, and the clat percentiles as fio ranks
	// them (the first value whose rank reaches ceil(p/100 N)).
	phase := detail.Phase(ph.Phase)
	if phase == nil {
		t.Fatalf("no phase %s in the run read back", ph.Phase)
	}
	for _, pw := range detail.Record.GetPhases()[len(s.Phases)-1].GetWorkers() {
		var fj struct {
			Jobs []struct {
				Write struct {
					TotalIOs int64 `json:"total_ios"`
					Clat     struct {
						N          int64            `json:"N"`
						Percentile map[string]int64 `json:"percentile"`
					} `json:"clat_ns"`
				} `json:"write"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(pw.GetSummary(), &fj); err != nil || len(fj.Jobs) != 1 {
			t.Errorf("worker %s: summary is not fio JSON of one job (%v): %.80q", pw.GetWorker(), err, pw.GetSummary())
			continue
		}
		wt := phase.Workers[pw.GetWorker()]
		if wt == nil {
			t.Errorf("worker %s: no totals in the fabric's summary", pw.GetWorker())
			continue
		}
		fw, h := fj.Jobs[0].Write, wt.Histogram("write")
		if h == nil || fw.TotalIOs != h.Count() || fw.Clat.N != h.Count() {
			t.Errorf("worker %s: fio JSON %d writes (clat N %d); the fabric's totals %v", pw.GetWorker(), fw.TotalIOs, fw.Clat.N, h)
			continue
		}
		for _, p := range []float64{1, 50, 90, 99, 99.9, 99.99} {
			rank := max(int64(math.Ceil(p/100*float64(h.Count()))), 1)
			if got, want := fw.Clat.Percentile[fmt.Sprintf("%f", p)], h.ValuesAtRanks([]int64{rank})[0]; got != want {
				t.Errorf("worker %s: fio JSON clat p%v = %d; the fabric's %d", pw.GetWorker(), p, got, want)
			}
		}
	}
	var out bytes.Buffer
	if err := client.WriteSummary(&out, s); err != nil || !strings.Contains(out.String(), "merged") {
		t.Errorf("WriteSummary = %v:\n%s", err, out.String())
	}
}

// TestClientRunCancelsWhenContextEnds: a client that gives up (Ctrl-C)
// cancels the run, which ends on every worker within 2 s, and the client
// gets the final record.
func TestClientRunCancelsWhenContextEnds(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 3, Bufconn: true})
	ctx, cancel := context.WithCancel(context.Background())
	intervals := 0
	var ended time.Time
	run, err := client.New(f.Control()).Run(ctx, fabrictest.SynthSpec(testkind.Spec{Ops: 1_000_000, Duration: time.Minute}),
		func(ev *writepathv1.WatchRunResponse) {
			if ev.GetInterval() != nil {
				if intervals++; intervals == 3 {
					ended = time.Now()
					cancel()
				}
			}
		})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v; want context.Canceled", err)
	}
	// Unloaded, the run ends ~0.1 s after the cancel; the bound leaves room
	// for -race on two cores shared with other suites.
	took := run.GetEnded().AsTime().Sub(ended)
	t.Logf("run ended %v after the cancel", took)
	if took > 4*time.Second {
		t.Errorf("run ended %v after the cancel; want well under CancelGrace + slack", took)
	}
	if run.GetState() != writepathv1.RunState_RUN_STATE_CANCELLED {
		t.Fatalf("state = %v (%s); want CANCELLED", run.GetState(), run.GetReason())
	}
	for _, pw := range run.GetPhases()[1].GetWorkers() {
		if !pw.GetDone() || !strings.Contains(pw.GetError(), "client interrupted") {
			t.Errorf("worker %s: done %v, %q; want confirmed cancel", pw.GetWorker(), pw.GetDone(), pw.GetError())
		}
	}
	if run.GetPhases()[1].GetState() != writepathv1.PhaseState_PHASE_STATE_CANCELLED {
		t.Errorf("phase state %v; want CANCELLED", run.GetPhases()[1].GetState())
	}
}
