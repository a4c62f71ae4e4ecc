package client

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
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

// deviceWindow accumulates one worker's device over a phase.
type deviceWindow struct {
	sum    diskstats.Delta
	window time.Duration
	n      int
	max    map[string]float64
}

// summarizeTelemetry adds the phase's device and InnoDB summaries.
func summarizeTelemetry(ps *PhaseSummary, r *writepathv1.GetRunResponse) {
	devs := map[[2]string]*deviceWindow{}
	gauges := map[[2]string][]int64{}
	for _, mi := range r.GetIntervals() {
		if mi.GetPhase() != ps.Phase {
			continue
		}
		for _, wt := range mi.GetTelemetry() {
			for _, d := range wt.GetTelemetry().GetDevices() {
				addDevice(devs, [2]string{wt.GetWorker(), d.GetDevice()}, d)
			}
			for name, v := range wt.GetGauges() {
				if strings.HasPrefix(name, "innodb.") || slices.Contains(gaugeDirty, name) || slices.Contains(gaugeCkptAge, name) {
					k := [2]string{wt.GetWorker(), name}
					gauges[k] = append(gauges[k], v)
				}
			}
		}
	}
	for _, k := range sortedKeys(devs) {
		w := devs[k]
		mean := w.sum.Stats(w.window)
		ds := DeviceSummary{Worker: k[0], Device: k[1], Intervals: w.n, Seconds: w.window.Seconds(),
			Mean: map[string]float64{}, Max: w.max}
		for _, c := range summaryColumns {
			ds.Mean[c.Name] = c.Get(&mean)
		}
		ps.Devices = append(ps.Devices, ds)
	}
	for _, k := range sortedKeys(gauges) {
		ps.InnoDB = append(ps.InnoDB, gaugeSummary(k[0], k[1], gauges[k]))
	}
}

func addDevice(devs map[[2]string]*deviceWindow, k [2]string, d *writepathv1.DeviceStats) {
	w := devs[k]
	if w == nil {
		w = &deviceWindow{max: map[string]float64{}}
		devs[k] = w
	}
	delta, window := DeviceDelta(d)
	w.sum.Add(delta)
	w.window += window
	w.n++
	s := delta.Stats(window)
	for _, c := range summaryColumns {
		w.max[c.Name] = max(w.max[c.Name], c.Get(&s))
	}
}

func gaugeSummary(worker, name string, vs []int64) GaugeSummary {
	g := GaugeSummary{Worker: worker, Gauge: name, Max: slices.Max(vs)}
	var sum float64
	for _, v := range vs {
		sum += float64(v)
	}
	g.Mean = sum / float64(len(vs))
	return g
}

func sortedKeys[V any](m map[[2]string]V) [][2]string {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	return keys
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
