package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

func TestDepthsAsFioFixesThem(t *testing.T) {
	tests := []struct {
		depth, submit, cmin, cmax, low uint32
		want                           depths
	}{
		{16, 1, 1, 0, 0, depths{16, 1, 1, 1, 16}},   // fio's defaults
		{16, 0, 4, 2, 32, depths{16, 16, 4, 4, 16}}, // 0 and too large are iodepth; max below min is min
		{16, 32, 0, 0, 4, depths{16, 16, 0, 0, 4}},
	}
	for _, tt := range tests {
		j := &fiov1.Job{Iodepth: tt.depth, IodepthBatchSubmit: tt.submit, IodepthBatchCompleteMin: tt.cmin,
			IodepthBatchCompleteMax: tt.cmax, IodepthLow: tt.low}
		if got := depthsOf(j); got != tt.want {
			t.Errorf("depthsOf(%+v) = %+v; want %+v", tt, got, tt.want)
		}
	}
	q := depths{16, 8, 4, 8, 4}
	for _, tt := range []struct{ inflight, lo, hi int }{{16, 4, 8}, {3, 3, 3}, {6, 4, 6}} {
		if lo, hi := q.reapRange(tt.inflight); lo != tt.lo || hi != tt.hi {
			t.Errorf("reapRange(%d) = %d, %d; want %d, %d", tt.inflight, lo, hi, tt.lo, tt.hi)
		}
	}
	// polling (both 0): one at least, as fio's wait_for_completions
	if lo, hi := (depths{16, 1, 0, 0, 16}).reapRange(16); lo != 1 || hi != 1 {
		t.Errorf("polling reapRange = %d, %d; want 1, 1", lo, hi)
	}
}

// TestBatchesMatchFio: iodepth_batch_submit, iodepth_batch_complete_min/
// max and iodepth_low on libaio and io_uring, against the real fio 3.33
// on the same job: the same I/O count, and the queue's shape (fio's IO
// depths / submit / complete distributions) as fio's where it does not
// depend on the device's timing.
func TestBatchesMatchFio(t *testing.T) {
	dir := diskDir(t)
	type dist map[string]float64
	read := func(t *testing.T, out []byte) (ios int64, level, submit, complete dist) {
		t.Helper()
		var doc struct {
			Jobs []struct {
				Write struct {
					TotalIOs int64 `json:"total_ios"`
				} `json:"write"`
				Level    dist `json:"iodepth_level"`
				Submit   dist `json:"iodepth_submit"`
				Complete dist `json:"iodepth_complete"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
			t.Fatalf("JSON: %v (%d jobs)", err, len(doc.Jobs))
		}
		j := doc.Jobs[0]
		return j.Write.TotalIOs, j.Level, j.Submit, j.Complete
	}
	for _, engine := range []string{"libaio", "io_uring"} {
		for _, tt := range []struct {
			name  string
			batch []string
			// exact: the distributions follow from the options alone
			// (completions reaped one at a time); else only no batch
			// is larger than its maximum.
			exact bool
		}{
			{"submit4-low8", []string{"--iodepth_batch_submit=4", "--iodepth_low=8"}, true},
			{"defaults", nil, true},
			{"submit8-complete4to8-low4", []string{"--iodepth_batch_submit=8", "--iodepth_batch_complete_min=4",
				"--iodepth_batch_complete_max=8", "--iodepth_low=4"}, false},
		} {
			t.Run(engine+"/"+tt.name, func(t *testing.T) {
				args := append([]string{"--name=b", "--ioengine=" + engine, "--direct=1", "--rw=randwrite", "--bs=4k",
					"--size=8m", "--iodepth=16", "--filename=" + filepath.Join(dir, "f-"+engine)}, tt.batch...)
				out, err := runFio(t, append(args, "--output-format=json")...)
				if err != nil {
					t.Fatalf("fio: %v", err)
				}
				fIOs, fLevel, fSubmit, fComplete := read(t, out)
				var got, errOut bytes.Buffer
				if err := RunCommand(context.Background(), append(args, "--output-format=json"), &got, &errOut, "t"); err != nil {
					t.Fatalf("writepath: %v %s", err, errOut.String())
				}
				gIOs, gLevel, gSubmit, gComplete := read(t, got.Bytes())
				t.Logf("fio: levels %v submit %v complete %v", fLevel, fSubmit, fComplete)
				t.Logf("writepath: levels %v submit %v complete %v", gLevel, gSubmit, gComplete)
				if gIOs != fIOs || gIOs != 2048 {
					t.Errorf("writes: writepath %d, fio %d; want 2048", gIOs, fIOs)
				}
				for _, d := range []struct {
					name string
					g, f dist
				}{{"levels", gLevel, fLevel}, {"submit", gSubmit, fSubmit}, {"complete", gComplete, fComplete}} {
					for k, fv := range d.f {
						gv := d.g[k]
						if tt.exact && math.Abs(gv-fv) > 2 {
							t.Errorf("%s %s: writepath %.1f%%, fio %.1f%%", d.name, k, gv, fv)
						}
						// fio's cleanup_pending_aio reaps whatever flies
						// at the end in one call (0.1% here): the only
						// batch above the maximum.
						if big := k == "16" || k == "32" || k == "64" || k == ">=64"; big && d.name != "levels" && (gv > 0 || fv > 1) {
							t.Errorf("%s batches of %s: writepath %.1f%%, fio %.1f%%; none is larger than 8", d.name, k, gv, fv)
						}
					}
				}
			})
		}
	}
}

// TestBatchesRefusedWhereNotBuilt: batching options on an engine that
// queues as fio's defaults only parse and are refused when run; at
// iodepth 1 (where fio makes every batch 1) they run.
func TestBatchesRefusedWhereNotBuilt(t *testing.T) {
	if _, err := ParseArgs([]string{"--name=n", "--ioengine=null", "--size=1m", "--iodepth=8", "--iodepth_batch=4"}); err == nil {
		t.Error("null engine at iodepth 8 with iodepth_batch=4 runs; want a refusal")
	}
	if _, err := ParseArgs([]string{"--name=n", "--ioengine=psync", "--size=1m", "--iodepth_batch=4", "--iodepth_low=2"}); err != nil {
		t.Errorf("psync with batches = %v; want it to run (fio clips them to iodepth 1)", err)
	}
}
