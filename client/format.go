package client

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// WriteSummary prints a summary: per phase the merged totals, then each
// worker's.
func WriteSummary(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "run %s  kind %s  %s", s.RunID, s.Kind, s.State)
	if s.Reason != "" {
		fmt.Fprintf(w, " (%s)", s.Reason)
	}
	fmt.Fprintln(w)
	if s.WorkerIntervalsPruned != "" {
		what := "workers show start skew only"
		if s.workerTotals() {
			what = "workers show their phase totals"
		}
		fmt.Fprintf(w, "per-worker intervals pruned %s (retention): %s\n", s.WorkerIntervalsPruned, what)
	}
	if err := writeHost(w, s.Host); err != nil {
		return err
	}
	cols := summaryOpColumns(s)
	for _, p := range s.Phases {
		fmt.Fprintf(w, "\nphase %s: %s, %d intervals, %.1fs\n", p.Phase, p.State, p.Intervals, p.Merged.Seconds)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\tworker\top\tcount\t")
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", c.name)
		}
		fmt.Fprintln(tw, "skew ms\t")
		writeTotals(tw, cols, "merged", "", p.Merged)
		for _, ws := range p.Workers {
			note := fmt.Sprintf("%.2f", ws.StartSkewMs)
			if ws.Lost {
				note += " LOST"
			}
			if s.WorkerIntervalsPruned != "" && !ws.has() {
				fmt.Fprintf(tw, "\t%s\tpruned\t\t%s%s\t\n", ws.Worker, strings.Repeat("\t", len(cols)), note)
				continue
			}
			writeTotals(tw, cols, ws.Worker, note, ws.Totals)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, ws := range p.Workers {
			if ws.Error != "" {
				fmt.Fprintf(w, "  %s: %s\n", ws.Worker, ws.Error)
			}
		}
		if err := writeTelemetry(w, p); err != nil {
			return err
		}
		if err := writeSeries(w, "merged", p.Merged.Series); err != nil {
			return err
		}
	}
	return nil
}

// workerTotals reports whether any worker has totals of its own (a pruned
// run written since the coordinator stores them when a phase ends).
func (s *Summary) workerTotals() bool {
	for _, p := range s.Phases {
		for _, ws := range p.Workers {
			if ws.has() {
				return true
			}
		}
	}
	return false
}

// has reports whether the worker has totals: any time covered.
func (t *Totals) has() bool { return t.Seconds > 0 || len(t.Ops) > 0 }

// opColumn is one column of a summary's operation rows.
type opColumn struct {
	name string
	get  func(o OpSummary) string
}

// summaryOpColumns are the operation columns of a run's kind:
// transactions per second and sysbench's p95 for a kind of transactions
// (Summary.Txn: oltp, crash); ops/s and each op's own MB/s for the others.
func summaryOpColumns(s *Summary) []opColumn {
	f3 := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	lat := []opColumn{{"p50 ms", func(o OpSummary) string { return f3(o.P50Ms) }}}
	if s.Txn {
		lat = append(lat, opColumn{"p95 ms", func(o OpSummary) string { return f3(o.P95Ms) }})
	}
	lat = append(lat, opColumn{"p99 ms", func(o OpSummary) string { return f3(o.P99Ms) }},
		opColumn{"p99.9 ms", func(o OpSummary) string { return f3(o.P999Ms) }},
		opColumn{"max ms", func(o OpSummary) string { return f3(o.MaxMs) }})
	if s.Txn {
		return append([]opColumn{{"tps", func(o OpSummary) string { return fmt.Sprintf("%.1f", o.OpsPerSec) }}}, lat...)
	}
	rate := func(o OpSummary) string { return fmt.Sprintf("%.0f", o.OpsPerSec) }
	mb := func(o OpSummary) string {
		if o.MBPerSec == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f", o.MBPerSec)
	}
	return append([]opColumn{{"ops/s", rate}, {"MB/s", mb}}, lat...)
}

func writeTotals(w io.Writer, cols []opColumn, who, note string, t Totals) {
	if len(t.Ops) == 0 {
		fmt.Fprintf(w, "\t%s\t-\t0\t%s%s\t\n", who, strings.Repeat("\t", len(cols)), note)
		return
	}
	for _, o := range t.Ops {
		fmt.Fprintf(w, "\t%s\t%s\t%d\t", who, o.Op, o.Count)
		for _, c := range cols {
			fmt.Fprintf(w, "%s\t", c.get(o))
		}
		fmt.Fprintf(w, "%s\t\n", note)
		who, note = "", ""
	}
}

// WriteRuns prints a run listing.
func WriteRuns(w io.Writer, runs []*writepathv1.Run) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tWORKERS\tCREATED\tREASON")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.GetId(), r.GetKindName(), stateName(r.GetState()),
			len(r.GetWorkers()), r.GetCreated().AsTime().Local().Format(time.DateTime), r.GetReason())
	}
	return tw.Flush()
}

// WriteWorkers prints a worker listing.
func WriteWorkers(w io.Writer, ws []*writepathv1.WorkerInfo) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHOST\tSTATE\tRUN\tKINDS\tLABELS\tCLOCK OFFSET\tRTT")
	for _, x := range ws {
		state := "offline"
		if x.GetConnected() {
			state = "connected"
		}
		var kinds, labels []string
		for _, k := range x.GetKinds() {
			kinds = append(kinds, k.GetName())
		}
		for k, v := range x.GetLabels() {
			labels = append(labels, k+"="+v)
		}
		sort.Strings(labels)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%v\t%v\n", x.GetName(), x.GetHost(), state, x.GetRunId(),
			strings.Join(kinds, ","), strings.Join(labels, ","), x.GetClockOffset().AsDuration(), x.GetRtt().AsDuration())
	}
	return tw.Flush()
}
