package client

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
)

// DeviceSummary is one worker's device over a phase. Mean is computed from
// the summed raw counter deltas over the summed windows, so it is exactly
// what `iostat -x` would print for the whole phase (not an average of
// per-interval rates); Max is the highest interval. Keys are iostat's
// column names.
type DeviceSummary struct {
	Worker    string             `json:"worker"`
	Device    string             `json:"device"`
	Intervals int                `json:"intervals"`
	Seconds   float64            `json:"seconds"`
	Mean      map[string]float64 `json:"mean"`
	Max       map[string]float64 `json:"max"`
}

// InnoDBSummary is one worker's InnoDB metric over a phase: a counter's
// rate from its summed increase over the summed time, or a level's mean;
// Max is the highest interval. Unit is the metric's (MB/s, /s, pages, MiB).
type InnoDBSummary struct {
	Worker string  `json:"worker"`
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	Mean   float64 `json:"mean"`
	Max    float64 `json:"max"`
}

// summarizeTelemetry adds the phase's device and InnoDB summaries from its
// telemetry windows and its merged intervals (ivs, in order).
func summarizeTelemetry(ps *PhaseSummary, ph *results.Phase, ivs []*writepathv1.MergedInterval) {
	for _, w := range ph.Devices {
		mean := w.Mean()
		ds := DeviceSummary{Worker: w.Worker, Device: w.Device, Intervals: w.Intervals, Seconds: w.Window.Seconds(),
			Mean: map[string]float64{}, Max: map[string]float64{}}
		for _, c := range summaryColumns {
			ds.Mean[c.Name] = c.Get(&mean)
			ds.Max[c.Name] = c.Get(&w.Max)
		}
		ps.Devices = append(ps.Devices, ds)
	}
	gauges := GaugesByWorker(ivs)
	slices.SortFunc(gauges, func(a, b WorkerGauges) int { return strings.Compare(a.Worker, b.Worker) })
	for _, g := range gauges {
		for _, m := range InnoDBMetrics {
			if mean, peak, ok := m.Window(g, 0); ok {
				ps.InnoDB = append(ps.InnoDB, InnoDBSummary{Worker: g.Worker, Metric: m.Key, Unit: m.Unit, Mean: mean, Max: peak})
			}
		}
	}
}

// writeTelemetry prints a phase's device table (mean and max rows per
// worker and device) and its InnoDB gauges.
func writeTelemetry(w io.Writer, p PhaseSummary) error {
	if len(p.Devices) > 0 {
		fmt.Fprintln(w, "  devices (iostat -x; mean over the phase from summed counters, max of an interval):")
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\tworker\tdevice\t")
		for _, c := range summaryColumns {
			fmt.Fprintf(tw, "%s\t", c.Name)
		}
		fmt.Fprintln(tw)
		for _, d := range p.Devices {
			writeDeviceRow(tw, d.Worker, d.Device+" mean", d.Mean)
			writeDeviceRow(tw, "", "max", d.Max)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(p.InnoDB) > 0 {
		fmt.Fprintln(w, "  innodb (counters as rates over the phase, levels as their mean; max of an interval):")
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tworker\tmetric\tunit\tmean\tmax\t")
		for _, g := range p.InnoDB {
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t\n", g.Worker, g.Metric, g.Unit, figure(g.Mean), figure(g.Max))
		}
		return tw.Flush()
	}
	return nil
}

func writeDeviceRow(w io.Writer, worker, label string, vals map[string]float64) {
	fmt.Fprintf(w, "\t%s\t%s\t", worker, label)
	for _, c := range summaryColumns {
		fmt.Fprintf(w, "%s\t", figure(vals[c.Name]))
	}
	fmt.Fprintln(w)
}
