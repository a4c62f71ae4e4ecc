package client

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// CompareRow is one metric of two runs side by side.
type CompareRow struct {
	Op, Metric string
	A, B       float64
	// DeltaPct is B's change against A in percent; 0 when A is 0.
	DeltaPct float64
	// Missing names the run that lacks the operation ("A" or "B").
	Missing string
}

// measured picks the phase a comparison looks at: the last one that
// recorded operations (oltp's run, fio's and crash's only phase).
func measured(s *Summary) *PhaseSummary {
	for i := len(s.Phases) - 1; i >= 0; i-- {
		if len(s.Phases[i].Merged.Ops) > 0 {
			return &s.Phases[i]
		}
	}
	return nil
}

// Compare lines up the measured phases of two runs: per operation the
// rate, its own MB/s where it moves bytes, and p50/p99/p99.9 (p95 too for
// transactions), from each run's merged histograms.
func Compare(a, b *Summary) []CompareRow {
	pa, pb := measured(a), measured(b)
	if pa == nil || pb == nil {
		return nil
	}
	var rows []CompareRow
	opsB := map[string]OpSummary{}
	for _, o := range pb.Merged.Ops {
		opsB[o.Op] = o
	}
	for _, oa := range pa.Merged.Ops {
		ob, ok := opsB[oa.Op]
		delete(opsB, oa.Op)
		for _, m := range compareMetrics(a.Txn, oa, ob) {
			r := row(oa.Op, m.name, m.get(oa), m.get(ob))
			if !ok {
				r.Missing = "B"
			}
			rows = append(rows, r)
		}
	}
	for _, ob := range pb.Merged.Ops {
		if _, left := opsB[ob.Op]; left {
			rows = append(rows, CompareRow{Op: ob.Op, Metric: "ops/s", B: ob.OpsPerSec, Missing: "A"})
		}
	}
	return rows
}

type opMetric struct {
	name string
	get  func(OpSummary) float64
}

// compareMetrics are the rows of one operation: for a kind's transactions
// tps and p95; else ops/s and, where either run moved bytes, MB/s.
func compareMetrics(txn bool, a, b OpSummary) []opMetric {
	rate := opMetric{"ops/s", func(o OpSummary) float64 { return o.OpsPerSec }}
	out := []opMetric{rate}
	if txn {
		out[0].name = "tps"
	} else if a.MBPerSec > 0 || b.MBPerSec > 0 {
		out = append(out, opMetric{"MB/s", func(o OpSummary) float64 { return o.MBPerSec }})
	}
	out = append(out, opMetric{"p50 ms", func(o OpSummary) float64 { return o.P50Ms }})
	if txn {
		out = append(out, opMetric{"p95 ms", func(o OpSummary) float64 { return o.P95Ms }})
	}
	return append(out, opMetric{"p99 ms", func(o OpSummary) float64 { return o.P99Ms }},
		opMetric{"p99.9 ms", func(o OpSummary) float64 { return o.P999Ms }})
}

func row(op, metric string, a, b float64) CompareRow {
	r := CompareRow{Op: op, Metric: metric, A: a, B: b}
	if a != 0 {
		r.DeltaPct = (b/a - 1) * 100
	}
	return r
}

// WriteComparison prints rows as a table headed by the two run ids.
func WriteComparison(w io.Writer, a, b *Summary, rows []CompareRow) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "op\tmetric\tA %s\tB %s\tΔ\t\n", a.RunID, b.RunID)
	for _, r := range rows {
		delta := fmt.Sprintf("%+.1f%%", r.DeltaPct)
		if r.Missing != "" {
			delta = "only in " + map[string]string{"A": "B", "B": "A"}[r.Missing]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.Op, r.Metric, fnum(r.A), fnum(r.B), delta)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeHostComparison(w, CompareHost(a, b))
}

func fnum(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.4f", v)
}
