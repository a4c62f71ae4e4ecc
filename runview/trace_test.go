package runview

import (
	"testing"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestTraceSeries: kernel series go to their own panels on the interval
// grid, never among the workload's ops.
func TestTraceSeries(t *testing.T) {
	ivs := []*writepathv1.MergedInterval{interval(t, 0, 10, nil), interval(t, 1, 10, nil)}
	ivs[1].Stats = append(ivs[1].Stats,
		&writepathv1.OpStats{Op: "block.vda.write.d2c", Count: 100, P99: 2e6},
		&writepathv1.OpStats{Op: "redo.read.bytes", Count: 5, P50: 4096},
		&writepathv1.OpStats{Op: "sys.fsync", Count: 7, P99: 3e6},
		&writepathv1.OpStats{Op: "sys.write.bytes", Count: 9, P50: 512})
	block, sys := traceSeries(ivs, []float64{0, 1})
	want := map[string]float64{"vda write d2c p99": 2, "redo reads": 5, "fsync p99": 3, "write size p50": 512}
	got := map[string]float64{}
	for _, s := range append(block, sys...) {
		if len(s.Values) != 2 || s.Values[0] != 0 {
			t.Errorf("%s: values %v; want 0 in interval 0", s.Name, s.Values)
		}
		got[s.Name] = s.Values[1]
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("series %q = %v; want %v (all %v)", k, got[k], v, got)
		}
	}
	if len(sys) != 2 {
		t.Errorf("syscall panel %v; want fsync p99 and write size p50", sys)
	}
}
