package client

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/writepath/writepath/campaign"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/diskstats"
)

// TelemetryColumns names the telemetry columns a campaign table can carry
// per cell and group: every `iostat -x` column of the run's busiest device
// and every InnoDB figure (InnoDBMetrics' keys), with their units.
func TelemetryColumns() []campaign.Column {
	var out []campaign.Column
	for _, c := range diskstats.Columns() {
		out = append(out, campaign.Column{Key: c.Name, Unit: iostatUnit(c.Name)})
	}
	for _, m := range InnoDBMetrics {
		out = append(out, campaign.Column{Key: m.Key, Unit: m.Unit})
	}
	return out
}

// iostatUnit is the unit of an iostat -x column, read from its name.
func iostatUnit(name string) string {
	switch {
	case strings.HasPrefix(name, "%"):
		return "%"
	case strings.HasSuffix(name, "kB/s"):
		return "kB/s"
	case strings.HasSuffix(name, "/s"):
		return "/s"
	case strings.HasSuffix(name, "_await"):
		return "ms"
	case strings.HasSuffix(name, "req-sz"):
		return "kB"
	case name == "aqu-sz":
		return "requests"
	}
	return ""
}

// CheckColumns refuses a telemetry column nobody computes, in one line
// naming the known ones.
func CheckColumns(names []string) error {
	known := TelemetryColumns()
	for _, n := range names {
		if !slices.ContainsFunc(known, func(c campaign.Column) bool { return c.Key == n }) {
			keys := make([]string, len(known))
			for i, c := range known {
				keys[i] = c.Key
			}
			return fmt.Errorf("unknown column %q (known: %s)", n, strings.Join(keys, ", "))
		}
	}
	return nil
}

// ParseColumns reads a --columns value: a comma list of TelemetryColumns'
// keys, or "none".
func ParseColumns(s string) ([]string, error) {
	if s == "none" {
		return []string{}, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out, CheckColumns(out)
}

// unitColumns gives the table's columns their units.
func unitColumns(t *campaign.Table) {
	known := TelemetryColumns()
	for i, c := range t.Columns {
		if j := slices.IndexFunc(known, func(k campaign.Column) bool { return k.Key == c.Key }); j >= 0 {
			t.Columns[i].Unit = known[j].Unit
		}
	}
}

// runFigures are a run's figures for the table: the kind's, from each
// worker's summary of the measured phase, and the telemetry columns over
// the window.
func runFigures(r *results.Run, spec *campaign.Spec, o TableOptions) (map[string][]float64, error) {
	ph := measuredPhase(r.Record)
	if ph == nil {
		return nil, nil
	}
	out := map[string][]float64{}
	if o.Kind.Figures != nil {
		for _, pw := range ph.GetWorkers() {
			if len(pw.GetSummary()) == 0 {
				continue
			}
			f, err := o.Kind.Figures(pw.GetSummary())
			if err != nil {
				return nil, fmt.Errorf("worker %s: %w", pw.GetWorker(), err)
			}
			for k, v := range f {
				out[k] = append(out[k], v...)
			}
		}
	}
	if len(spec.Columns) > 0 {
		for k, v := range windowTelemetry(r, ph, spec.Window, spec.Columns) {
			out[k] = append(out[k], v)
		}
	}
	return out, nil
}

// windowTelemetry computes the named telemetry columns over the window's
// intervals of the phase: a device column from the raw counters summed
// over the window (exactly what `iostat -x` prints for that span) on the
// device that did the most I/O, an InnoDB counter as its increase over the
// window's time, a level as its mean. A column the run did not record is
// absent.
func windowTelemetry(r *results.Run, ph *writepathv1.PhaseRecord, w campaign.Window, cols []string) map[string]float64 {
	at := ph.GetAt().AsTime()
	var ivs []*writepathv1.MergedInterval
	from, to := -1, -1
	for _, mi := range r.Intervals {
		if mi.GetPhase() != ph.GetName() {
			continue
		}
		if w.Includes(mi.GetStart().AsTime().Sub(at), mi.GetEnd().AsTime().Sub(at)) {
			if from < 0 {
				from = len(ivs)
			}
			to = len(ivs)
		}
		ivs = append(ivs, mi)
	}
	out := map[string]float64{}
	if from < 0 {
		return out
	}
	type dev struct {
		sum    diskstats.Delta
		window time.Duration
	}
	devs := map[[2]string]*dev{}
	var busiest *dev
	for _, mi := range ivs[from : to+1] {
		for _, wt := range mi.GetTelemetry() {
			for _, d := range wt.GetTelemetry().GetDevices() {
				k := [2]string{wt.GetWorker(), d.GetDevice()}
				if devs[k] == nil {
					devs[k] = &dev{}
				}
				delta, win := results.DeviceDelta(d)
				devs[k].sum.Add(delta)
				devs[k].window += win
			}
		}
	}
	for _, d := range devs {
		if busiest == nil || d.sum.ReadIOs+d.sum.WriteIOs > busiest.sum.ReadIOs+busiest.sum.WriteIOs {
			busiest = d
		}
	}
	start, skip := from, 0
	if from > 0 {
		start, skip = from-1, 1 // the interval before only starts a counter's increase
	}
	gauges := GaugesByWorker(ivs[start : to+1])
	for _, name := range cols {
		if m, ok := InnoDBMetricByKey(name); ok {
			for _, g := range gauges {
				if mean, _, ok := m.Window(g, skip); ok {
					out[name] = mean
					break
				}
			}
			continue
		}
		if busiest == nil || busiest.window <= 0 {
			continue
		}
		st := busiest.sum.Stats(busiest.window)
		for _, c := range diskstats.Columns() {
			if c.Name == name {
				out[name] = c.Value(&st)
			}
		}
	}
	return out
}
