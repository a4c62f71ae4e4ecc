package client

import (
	"bytes"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	a := &Summary{RunID: "A", Phases: []PhaseSummary{{Phase: "run", Merged: Totals{MBPerSec: 10,
		Ops: []OpSummary{{Op: "write", OpsPerSec: 1000, P50Ms: 2, P99Ms: 10, P999Ms: 20}}}}}}
	b := &Summary{RunID: "B", Phases: []PhaseSummary{{Phase: "prepare"}, {Phase: "run", Merged: Totals{MBPerSec: 15,
		Ops: []OpSummary{{Op: "write", OpsPerSec: 1500, P50Ms: 1, P99Ms: 5, P999Ms: 30}, {Op: "sync", OpsPerSec: 3}}}}}}
	rows := Compare(a, b)
	want := map[string]float64{"write ops/s": 50, "write p50 ms": -50, "write p99 ms": -50, "write p99.9 ms": 50, " MB/s": 50}
	for _, r := range rows {
		if d, ok := want[r.Op+" "+r.Metric]; ok && r.DeltaPct != d {
			t.Errorf("Compare %s %s delta = %v; want %v", r.Op, r.Metric, r.DeltaPct, d)
		}
	}
	if len(rows) != 6 || rows[4].Op != "sync" || rows[4].Missing != "A" {
		t.Errorf("Compare rows = %+v; want 4 write metrics, sync only in B, MB/s", rows)
	}
	var out bytes.Buffer
	if err := WriteComparison(&out, a, b, rows); err != nil || !strings.Contains(out.String(), "+50.0%") || !strings.Contains(out.String(), "only in B") {
		t.Errorf("WriteComparison = %v:\n%s", err, out.String())
	}
}
