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
	for _, p := range s.Phases {
		fmt.Fprintf(w, "\nphase %s: %s, %d intervals, %.1fs\n", p.Phase, p.State, p.Intervals, p.Merged.Seconds)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tworker\top\tcount\tops/s\tMB/s\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\tskew ms\t")
		writeTotals(tw, "merged", "", p.Merged)
		for _, ws := range p.Workers {
			note := fmt.Sprintf("%.2f", ws.StartSkewMs)
			if ws.Lost {
				note += " LOST"
			}
			if s.WorkerIntervalsPruned != "" && !ws.has() {
				fmt.Fprintf(tw, "\t%s\tpruned\t\t\t\t\t\t\t\t%s\t\n", ws.Worker, note)
				continue
			}
			writeTotals(tw, ws.Worker, note, ws.Totals)
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

func writeTotals(w io.Writer, who, note string, t Totals) {
	if len(t.Ops) == 0 {
		fmt.Fprintf(w, "\t%s\t-\t0\t0\t%.2f\t\t\t\t\t%s\t\n", who, t.MBPerSec, note)
		return
	}
	for i, o := range t.Ops {
		mb := ""
		if i == 0 {
			mb = fmt.Sprintf("%.2f", t.MBPerSec)
		}
		fmt.Fprintf(w, "\t%s\t%s\t%d\t%.0f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", who, o.Op, o.Count, o.OpsPerSec, mb,
			o.P50Ms, o.P99Ms, o.P999Ms, o.MaxMs, note)
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
