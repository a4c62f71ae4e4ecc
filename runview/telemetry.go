package runview

import (
	"maps"
	"slices"

	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/results"
)

// units of the summary's iostat columns, for the report's axes.
var units = map[string]string{
	"r/s": "IOPS", "w/s": "IOPS", "f/s": "IOPS", "wrqm/s": "merges/s",
	"rkB/s": "KiB/s", "wkB/s": "KiB/s", "w_await": "ms", "f_await": "ms",
	"%wrqm": "%", "%util": "%", "wareq-sz": "KiB", "aqu-sz": "requests",
}

// telemetrySeries returns one series per worker, device and iostat column
// ("vda w/s", or "worker-2:vda w/s" when several workers report), and one
// per worker and InnoDB gauge, and one per worker and disk-profile value
// (credits, cap in force). An interval a worker did not report is 0.
func telemetrySeries(ivs []*writepathv1.MergedInterval, t []float64) (devices, innodb, disk []report.Series) {
	multi := false
	for _, mi := range ivs {
		multi = multi || len(mi.GetTelemetry()) > 1
	}
	dev, gauges, dp := newSeriesSet(t), newSeriesSet(t), newSeriesSet(t)
	cols := client.SummaryColumns()
	for k, mi := range ivs {
		for _, wt := range mi.GetTelemetry() {
			who := ""
			if multi {
				who = wt.GetWorker() + ":"
			}
			for _, d := range wt.GetTelemetry().GetDevices() {
				s := results.DeviceFigures(d)
				for _, c := range cols {
					dev.at(who+d.GetDevice()+" "+c.Name, units[c.Name])[k] = c.Get(&s)
				}
			}
			values := wt.GetTelemetry().GetValues()
			for _, name := range slices.Sorted(maps.Keys(values)) {
				if u, ok := diskUnits[name]; ok {
					dp.at(who+name, u)[k] = values[name]
				}
			}
		}
	}
	// InnoDB: counters as rates over each interval, levels as levels, each
	// with its unit (client.InnoDBMetrics), never an LSN beside page counts.
	for _, g := range client.GaugesByWorker(ivs) {
		who := ""
		if multi {
			who = g.Worker + ":"
		}
		for _, m := range client.InnoDBMetrics {
			if !m.Has(g) {
				continue
			}
			vals, ok := m.PerInterval(g)
			dst := gauges.at(who+m.Title, m.Unit)
			for k := range vals {
				if ok[k] {
					dst[k] = vals[k]
				}
			}
		}
	}
	return dev.list(), gauges.list(), dp.list()
}

// diskUnits are package diskprofile's telemetry values.
// The balance is charted as a share of the bucket, on its own axis.
var diskUnits = map[string]string{"disk.credits_pct": "%", "disk.cap_iops": "IOPS", "disk.cap_mbps": "MB/s"}

// seriesSet builds named series on one grid, in first-seen order.
type seriesSet struct {
	t     []float64
	order []string
	by    map[string]*report.Series
}

func newSeriesSet(t []float64) *seriesSet {
	return &seriesSet{t: t, by: map[string]*report.Series{}}
}

// at returns the values of series name, creating it (all zeros) first.
func (s *seriesSet) at(name, unit string) []float64 {
	sr := s.by[name]
	if sr == nil {
		sr = &report.Series{Name: name, Unit: unit, T: s.t, Values: make([]float64, len(s.t))}
		s.by[name] = sr
		s.order = append(s.order, name)
	}
	return sr.Values
}

func (s *seriesSet) list() []report.Series {
	out := make([]report.Series, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, *s.by[n])
	}
	return out
}
