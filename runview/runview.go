package runview

import (
	"fmt"
	"time"

	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// Run converts a stored run, read with results.PerWorker. Series are on the
// grid of the run's merged intervals in stored order (measured phases, then
// seq): T is seconds from the first interval's start, and index k of every
// series is interval k.
func Run(r *results.Run) (report.Run, error) {
	run := r.Record
	// The report draws its own columns: nothing of the kind's is read.
	s, err := client.Summarize(r, client.Kind{})
	if err != nil {
		return report.Run{}, err
	}
	out := report.Run{ID: run.GetId(), Kind: run.GetKindName(), State: s.State,
		Title: fmt.Sprintf("%s run %s", run.GetKindName(), run.GetId()), Interval: run.GetInterval().AsDuration()}
	if ts := run.GetStarted(); ts != nil {
		out.Started = ts.AsTime()
	}
	t := grid(r.Intervals)
	ops, err := opSeries(r, t)
	if err != nil {
		return report.Run{}, err
	}
	out.Ops = ops
	out.Devices, out.InnoDB, out.Disk = telemetrySeries(r.Intervals, t)
	out.Block, out.Syscalls = traceSeries(r.Intervals, t)
	out.Evidence = evidenceRows(s)
	out.Workers = workerRows(s)
	for _, k := range s.Host {
		out.Host = append(out.Host, report.HostRow{Worker: k.Worker, Knob: k.Knob, Target: k.Target, Before: k.Before, Set: k.Set, Read: k.Read})
	}
	if run.GetReason() != "" {
		out.Notes = append(out.Notes, run.GetReason())
	}
	return out, nil
}

// grid is each interval's start in seconds from the first one's.
func grid(ivs []*writepathv1.MergedInterval) []float64 {
	t := make([]float64, len(ivs))
	if len(ivs) == 0 {
		return t
	}
	first := ivs[0].GetStart().AsTime()
	for i, mi := range ivs {
		t[i] = mi.GetStart().AsTime().Sub(first).Seconds()
	}
	return t
}

// opSeries is one series per operation: rate and percentiles per interval
// (0 where the op did not occur), and its whole-run merged histogram.
func opSeries(r *results.Run, t []float64) ([]report.OpSeries, error) {
	var names []string
	idx := map[string]int{}
	for _, mi := range r.Intervals {
		for _, st := range mi.GetStats() {
			if series.Is(st.GetOp()) {
				continue // kernel evidence: traceSeries draws it
			}
			if _, ok := idx[st.GetOp()]; !ok {
				idx[st.GetOp()] = len(names)
				names = append(names, st.GetOp())
			}
		}
	}
	out := make([]report.OpSeries, len(names))
	n := len(t)
	for i, name := range names {
		total := r.Total(name)
		if total == nil {
			return nil, fmt.Errorf("op %s: run %s has stats but no histogram of it", name, run(r))
		}
		out[i] = report.OpSeries{Name: name, T: t, Rate: make([]float64, n), P50: make([]float64, n),
			P99: make([]float64, n), P999: make([]float64, n), Total: total}
	}
	for k, mi := range r.Intervals {
		for _, st := range mi.GetStats() {
			if series.Is(st.GetOp()) {
				continue
			}
			o := &out[idx[st.GetOp()]]
			if secs := mi.GetSeconds(); secs > 0 {
				o.Rate[k] = float64(st.GetCount()) / secs
			}
			o.P50[k], o.P99[k], o.P999[k] = ms(st.GetP50()), ms(st.GetP99()), ms(st.GetP999())
		}
		// Each op's own bytes (fio's <op>_bytes counters): the bandwidth
		// chart, as fio-plot draws beside IOPS.
		for i := range out {
			o := &out[i]
			b, ok := mi.GetCounters()[o.Name+"_"+client.BytesSuffix]
			if !ok || mi.GetSeconds() <= 0 {
				continue
			}
			if o.MBps == nil {
				o.MBps = make([]float64, n)
			}
			o.MBps[k] = float64(b) / mi.GetSeconds() / 1e6
		}
	}
	return out, nil
}

func workerRows(s *client.Summary) []report.WorkerRow {
	var rows []report.WorkerRow
	for _, p := range s.Phases {
		for _, w := range p.Workers {
			row := report.WorkerRow{Name: w.Worker, StartSkewMs: w.StartSkewMs}
			for _, o := range w.Ops {
				row.Ops += o.Count
				row.Rate += o.OpsPerSec
				row.P99Ms = max(row.P99Ms, o.P99Ms)
			}
			if row.Ops > 0 {
				rows = append(rows, row)
			}
		}
	}
	return rows
}

func run(r *results.Run) string { return r.Record.GetId() }

func ms(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
