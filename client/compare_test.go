package client

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	a := &Summary{RunID: "A", Phases: []PhaseSummary{{Phase: "run", Merged: Totals{MBPerSec: 10,
		Ops: []OpSummary{{Op: "write", OpsPerSec: 1000, MBPerSec: 10, P50Ms: 2, P99Ms: 10, P999Ms: 20}}}}}}
	b := &Summary{RunID: "B", Phases: []PhaseSummary{{Phase: "prepare"}, {Phase: "run", Merged: Totals{MBPerSec: 15,
		Ops: []OpSummary{{Op: "write", OpsPerSec: 1500, MBPerSec: 15, P50Ms: 1, P99Ms: 5, P999Ms: 30}, {Op: "sync", OpsPerSec: 3}}}}}}
	rows := Compare(a, b)
	want := map[string]float64{"write ops/s": 50, "write p50 ms": -50, "write p99 ms": -50, "write p99.9 ms": 50, "write MB/s": 50}
	for _, r := range rows {
		if d, ok := want[r.Op+" "+r.Metric]; ok && r.DeltaPct != d {
			t.Errorf("Compare %s %s delta = %v; want %v", r.Op, r.Metric, r.DeltaPct, d)
		}
	}
	if len(rows) != 6 || rows[1].Metric != "MB/s" || rows[5].Op != "sync" || rows[5].Missing != "A" {
		t.Errorf("Compare rows = %+v; want 5 write metrics (MB/s the write's own), sync only in B", rows)
	}
	a.Txn, b.Txn = true, true // oltp declares its transactions
	a.Phases[0].Merged.Ops[0].Op, b.Phases[1].Merged.Ops[0].Op = "trx", "trx"
	if rows := Compare(a, b); rows[0].Metric != "tps" || rows[2].Metric != "p95 ms" || slices.ContainsFunc(rows, func(r CompareRow) bool { return r.Metric == "MB/s" }) {
		t.Errorf("oltp Compare rows = %+v; want tps and p95, no MB/s", rows)
	}
	var out bytes.Buffer
	if err := WriteComparison(&out, a, b, rows); err != nil || !strings.Contains(out.String(), "+50.0%") || !strings.Contains(out.String(), "only in B") {
		t.Errorf("WriteComparison = %v:\n%s", err, out.String())
	}
}
