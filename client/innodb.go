package client

import (
	"slices"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// StatusPeriod is how often workload/oltp samples the server's status: a
// delta gauge ("innodb.log_waits") is the increase over the last sample,
// so divided by StatusPeriod it is a rate per second.
const StatusPeriod = time.Second

// InnoDBMetric is one InnoDB figure as lines, summaries, campaign tables
// and reports show it. A counter (Total, or Delta on runs stored before
// the totals existed) is shown as a rate; a level (Level) as it is, its
// mean over a window. The gauges come from workload/oltp
// (telemetry/mysqlstatus) and, as aliases, from workload/crash.
type InnoDBMetric struct {
	// Key names it in tables, --columns and JSON ("redo_MB/s").
	Key string
	// Title names it in charts ("redo written").
	Title string
	// Unit is its unit after Scale: "MB/s", "/s", "pages", "MiB", "writes".
	Unit string
	// Total is the gauge holding the cumulative counter: a window's rate
	// is the difference of two readings over the time between them.
	Total []string
	// Delta is the gauge holding the increase over the last status sample.
	Delta string
	// Level are the gauges read as values, first present.
	Level []string
	// Scale converts the counter or value to Unit (bytes to MB: 1e-6).
	Scale float64
}

// Rate reports whether the metric is a counter shown per second.
func (m InnoDBMetric) Rate() bool { return len(m.Level) == 0 }

// InnoDBMetrics are the InnoDB figures, in the order tables show them. A
// table, never written.
var InnoDBMetrics = []InnoDBMetric{
	{Key: "redo_MB/s", Title: "redo written", Unit: "MB/s", Total: []string{"innodb.os_log_written_total"}, Delta: "innodb.os_log_written_bytes", Scale: 1e-6},
	{Key: "lsn_MB/s", Title: "LSN advance", Unit: "MB/s", Total: []string{"innodb.lsn", "innodb_lsn"}, Scale: 1e-6},
	{Key: "fsyncs/s", Title: "data fsyncs", Unit: "/s", Total: []string{"innodb.data_fsyncs_total"}, Delta: "innodb.data_fsyncs", Scale: 1},
	{Key: "log_waits/s", Title: "log waits", Unit: "/s", Total: []string{"innodb.log_waits_total"}, Delta: "innodb.log_waits", Scale: 1},
	{Key: "dblwr_pages/s", Title: "doublewrite pages", Unit: "/s", Total: []string{"innodb.dblwr_pages_written_total"}, Delta: "innodb.dblwr_pages_written", Scale: 1},
	{Key: "dirty", Title: "dirty pages", Unit: "pages", Level: []string{"innodb.pages_dirty", "pages_dirty"}, Scale: 1},
	{Key: "pending_writes", Title: "pending writes", Unit: "writes", Level: []string{"innodb.data_pending_writes"}, Scale: 1},
	{Key: "ckpt_age", Title: "checkpoint age", Unit: "MiB", Level: []string{"innodb.checkpoint_age_bytes", "checkpoint_age"}, Scale: 1.0 / (1 << 20)},
}

// InnoDBMetricByKey returns the metric named key.
func InnoDBMetricByKey(key string) (InnoDBMetric, bool) {
	i := slices.IndexFunc(InnoDBMetrics, func(m InnoDBMetric) bool { return m.Key == key })
	if i < 0 {
		return InnoDBMetric{}, false
	}
	return InnoDBMetrics[i], true
}

// WorkerGauges are one worker's gauges at the end of each of a span of
// merged intervals (nil where it reported none), and the intervals'
// lengths.
type WorkerGauges struct {
	Worker string
	At     []map[string]int64
	Secs   []float64
}

// GaugesByWorker collects each worker's gauges over ivs (in order), in
// worker order of first appearance.
func GaugesByWorker(ivs []*writepathv1.MergedInterval) []WorkerGauges {
	var out []WorkerGauges
	idx := map[string]int{}
	for k, mi := range ivs {
		for _, wt := range mi.GetTelemetry() {
			if len(wt.GetGauges()) == 0 {
				continue
			}
			i, ok := idx[wt.GetWorker()]
			if !ok {
				i = len(out)
				idx[wt.GetWorker()] = i
				out = append(out, WorkerGauges{Worker: wt.GetWorker(), At: make([]map[string]int64, len(ivs)), Secs: make([]float64, len(ivs))})
			}
			out[i].At[k] = wt.GetGauges()
		}
		for i := range out {
			out[i].Secs[k] = mi.GetSeconds()
		}
	}
	return out
}

// first returns the first of names present in g.
func first(g map[string]int64, names []string) (int64, bool) {
	for _, n := range names {
		if v, ok := g[n]; ok {
			return v, true
		}
	}
	return 0, false
}

// Has reports whether g holds the metric in any interval.
func (m InnoDBMetric) Has(g WorkerGauges) bool {
	for _, at := range g.At {
		if _, ok := first(at, m.Total); ok {
			return true
		}
		if _, ok := first(at, m.Level); ok {
			return true
		}
		if _, ok := at[m.Delta]; ok && m.Delta != "" {
			return true
		}
	}
	return false
}

// Latest is the metric from one interval's gauges alone: a counter's
// increase over the last status sample per second, a level as read (a
// counter with only a cumulative reading, such as the LSN, is unknown).
func (m InnoDBMetric) Latest(g map[string]int64) (float64, bool) {
	if !m.Rate() {
		v, ok := first(g, m.Level)
		return float64(v) * m.Scale, ok
	}
	v, ok := g[m.Delta]
	if !ok || m.Delta == "" {
		return 0, false
	}
	return float64(v) / StatusPeriod.Seconds() * m.Scale, true
}

// PerInterval returns the metric at each interval of g; ok[k] is false
// where it is unknown (no reading, the first interval of a counter, or a
// counter that went down: the server restarted).
func (m InnoDBMetric) PerInterval(g WorkerGauges) (vals []float64, ok []bool) {
	vals, ok = make([]float64, len(g.At)), make([]bool, len(g.At))
	for k, at := range g.At {
		vals[k], ok[k] = m.at(g, k, at)
	}
	return vals, ok
}

func (m InnoDBMetric) at(g WorkerGauges, k int, at map[string]int64) (float64, bool) {
	if !m.Rate() {
		v, ok := first(at, m.Level)
		return float64(v) * m.Scale, ok
	}
	if inc, secs, ok := m.increase(g, k); ok {
		return inc / secs * m.Scale, true
	}
	if v, ok := at[m.Delta]; ok && m.Delta != "" && !m.hasTotal(g) {
		return float64(v) / StatusPeriod.Seconds() * m.Scale, true
	}
	return 0, false
}

// increase is a counter's increase over interval k and that interval's
// length, from the cumulative readings at its end and at the previous
// interval's end.
func (m InnoDBMetric) increase(g WorkerGauges, k int) (float64, float64, bool) {
	if k == 0 || g.Secs[k] <= 0 {
		return 0, 0, false
	}
	cur, ok1 := first(g.At[k], m.Total)
	prev, ok2 := first(g.At[k-1], m.Total)
	if !ok1 || !ok2 || cur < prev {
		return 0, 0, false
	}
	return float64(cur - prev), g.Secs[k], true
}

func (m InnoDBMetric) hasTotal(g WorkerGauges) bool {
	for _, at := range g.At {
		if _, ok := first(at, m.Total); ok {
			return true
		}
	}
	return false
}

// Window returns the metric over the intervals of g from index from on
// (the interval before from only starts a counter's increase): a counter's
// summed increase over the summed time, a level's mean; and the largest
// value of one interval. ok is false when nothing was known.
func (m InnoDBMetric) Window(g WorkerGauges, from int) (mean, peak float64, ok bool) {
	var sum, secs float64
	n := 0
	for k := from; k < len(g.At); k++ {
		v, known := m.at(g, k, g.At[k])
		if !known {
			continue
		}
		if !ok || v > peak {
			peak = v
		}
		ok = true
		n++
		if inc, s, counted := m.increase(g, k); counted {
			sum += inc * m.Scale
			secs += s
			continue
		}
		sum += v
	}
	switch {
	case !ok:
		return 0, 0, false
	case secs > 0:
		return sum / secs, peak, true
	}
	return sum / float64(n), peak, true
}
