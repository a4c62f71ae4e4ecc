package client

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

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

// GaugeSummary is one worker's gauge over a phase: mean and max of its
// values at the interval ends.
type GaugeSummary struct {
	Worker string  `json:"worker"`
	Gauge  string  `json:"gauge"`
	Mean   float64 `json:"mean"`
	Max    int64   `json:"max"`
}

// summarizeTelemetry adds the phase's device and InnoDB summaries from its
// telemetry windows.
func summarizeTelemetry(ps *PhaseSummary, ph *results.Phase) {
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
	for _, g := range ph.Gauges {
		if strings.HasPrefix(g.Gauge, "innodb.") || slices.Contains(gaugeDirty, g.Gauge) || slices.Contains(gaugeCkptAge, g.Gauge) {
			ps.InnoDB = append(ps.InnoDB, GaugeSummary{Worker: g.Worker, Gauge: g.Gauge, Mean: g.Mean(), Max: g.Max})
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
		fmt.Fprintln(w, "  innodb (gauges at interval ends):")
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tworker\tgauge\tmean\tmax\t")
		for _, g := range p.InnoDB {
			fmt.Fprintf(tw, "\t%s\t%s\t%.1f\t%d\t\n", g.Worker, g.Gauge, g.Mean, g.Max)
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
