package fio

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// percentiles are fio's default percentile_list; the JSON keys are their
// "%f" renderings ("1.000000" .. "99.990000").
var percentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// percentilesOf is a job's percentile_list, or fio's default.
func percentilesOf(j *fiov1.Job) []float64 {
	if len(j.PercentileList) > 0 {
		return j.PercentileList
	}
	return percentiles
}

// writeJSONView writes fio's json (plus: json+) output of one run.
func writeJSONView(out io.Writer, v *view, plus bool) error {
	return writeJSON(out, jsonTop(v, plus, false))
}

// jsonTop is fio's top-level object; exact adds what a worker's summary
// needs to be merged exactly (see summaryJSON).
func jsonTop(v *view, plus, exact bool) obj {
	jobs := make([]obj, 0, len(v.entries))
	for _, e := range v.entries {
		o := jobJSON(e, v, plus || exact)
		if exact {
			o = append(o, kv{"writepath", exactJSON(e, v)})
		}
		jobs = append(jobs, o)
	}
	top := obj{
		{"fio version", versionString(v.version)},
		{"timestamp", v.start.Unix()},
		{"timestamp_ms", v.start.UnixMilli()},
		{"time", fioTime(v.start)},
	}
	if len(v.spec.GlobalOptions) > 0 {
		top = append(top, kv{"global options", optionsJSON(v.spec.GlobalOptions)})
	}
	top = append(top, kv{"jobs", jobs}, kv{"disk_util", disksJSON(v.disks)})
	if exact {
		top = append(top, kv{"writepath", runExactJSON(v)})
	}
	return top
}

// fioTime is ctime(3) without its newline, as fio's "time" and its
// normal output's job line print it.
func fioTime(t time.Time) string { return t.Format("Mon Jan _2 15:04:05 2006") }

func optionsJSON(opts []*fiov1.Option) obj {
	o := obj{}
	for _, op := range opts {
		o = append(o, kv{op.Name, op.Value})
	}
	return o
}

func jobJSON(e entry, v *view, plus bool) obj {
	st, j := e.st, e.job
	o := obj{
		{"jobname", e.name}, {"groupid", e.group}, {"error", jobErrno(e)}, {"eta", 0},
		{"elapsed", int64(v.elapsed.Round(time.Second).Seconds())},
		{"job options", optionsJSON(e.job.Options)},
	}
	if j.UnifiedRwReporting {
		o = append(o, kv{"mixed", dirJSON(e, dirRead, plus)})
	} else {
		o = append(o, kv{"read", dirJSON(e, dirRead, plus)}, kv{"write", dirJSON(e, dirWrite, plus)},
			kv{"trim", dirJSON(e, dirTrim, plus)})
	}
	o = append(o,
		kv{"sync", obj{{"total_ios", st.syncIOs},
			{"lat_ns", latJSON(st.syncLat, j.ClatPercentiles || j.LatPercentiles, plus, percentilesOf(j))}}},
		kv{"job_runtime", st.runtime.Milliseconds()},
		kv{"usr_cpu", cpuPct(st.usage.usr, st.runtime)},
		kv{"sys_cpu", cpuPct(st.usage.sys, st.runtime)},
		kv{"ctx", st.usage.ctx}, kv{"majf", st.usage.majf}, kv{"minf", st.usage.minf},
		kv{"iodepth_level", bucketsJSON(st.level, st.level.sum(), levelLabels, true)},
		kv{"iodepth_submit", bucketsJSON(st.submit, st.submits, batchLabels, false)},
		kv{"iodepth_complete", bucketsJSON(st.complete, st.completes, batchLabels, false)},
	)
	lat := st.done
	o = append(o,
		kv{"latency_ns", latBucketsJSON(lat, 1, nsLabels)},
		kv{"latency_us", latBucketsJSON(lat, 1e3, nsLabels)},
		kv{"latency_ms", latBucketsJSON(lat, 1e6, msLabels)},
	)
	if j.ContinueOnError != 0 {
		o = append(o, kv{"total_err", st.totalErr}, kv{"first_error", st.firstError})
	}
	o = append(o,
		kv{"latency_depth", latDepthOf(e)}, kv{"latency_target", e.job.LatencyTargetNs},
		kv{"latency_percentile", latPercentile(e.job)}, kv{"latency_window", e.job.LatencyWindowNs / 1000})
	return o
}

// dirJSON is one direction's object.
func dirJSON(e entry, d int, plus bool) obj {
	ds, share := e.st.dir[d], e.bwShare[d]
	if ds.bw.n == 0 {
		share = 0 // fio's bw_agg comes from the bandwidth samples
	}
	short := ds.short
	if d == dirRead {
		// fio 3.33 counts fdatasyncs in total_io_u[DDIR_DATASYNC], one
		// past the array's end: it reads back as the read short_ios.
		short += e.st.datasyncIOs
	}
	j, pl := e.job, percentilesOf(e.job)
	ms := e.st.wall.Milliseconds()
	if ds.ios == 0 {
		ms = 0
	}
	var bwBytes, iops float64
	if ms > 0 {
		bwBytes = float64(ds.bytes) * 1000 / float64(ms)
		iops = float64(ds.ios) * 1000 / float64(ms)
	}
	o := obj{
		{"io_bytes", ds.bytes}, {"io_kbytes", ds.bytes >> 10},
		{"bw_bytes", int64(bwBytes)}, {"bw", int64(bwBytes / 1024)}, {"iops", iops},
		{"runtime", ms}, {"total_ios", ds.ios + ds.errored}, {"short_ios", short}, {"drop_ios", 0},
		{"slat_ns", withMean(latJSON(ds.slat, j.SlatPercentiles, plus, pl), exactMean(ds.slat, ds.slatSum))},
		{"clat_ns", withMean(latJSON(ds.clat, j.ClatPercentiles, plus, pl), exactMean(ds.clat, ds.clatSum))},
		{"lat_ns", withMean(latJSON(ds.lat, j.LatPercentiles, plus, pl), exactMean(ds.lat, ds.latSum))},
	}
	if prioSamples(ds.prio) >= 2 {
		o = append(o, kv{"prios", priosJSON(ds.prio, j, plus, pl)})
	}
	return append(o, obj{
		{"bw_min", int64(ds.bw.min)}, {"bw_max", int64(ds.bw.max)}, {"bw_agg", share},
		{"bw_mean", ds.bw.mean}, {"bw_dev", ds.bw.stddev()}, {"bw_samples", ds.bw.n},
		{"iops_min", int64(ds.iops.min)}, {"iops_max", int64(ds.iops.max)},
		{"iops_mean", ds.iops.mean}, {"iops_stddev", ds.iops.stddev()}, {"iops_samples", ds.iops.n},
	}...)
}

// priosJSON is fio's "prios" array: each priority with samples, its class,
// level and latencies (lat_ns with lat_percentiles, else clat_ns).
func priosJSON(ps []prioStat, j *fiov1.Job, plus bool, pl []float64) []obj {
	name := "clat_ns"
	if j.LatPercentiles {
		name = "lat_ns"
	}
	var out []obj
	for _, p := range ps {
		if p.h.Count() == 0 {
			continue
		}
		out = append(out, obj{{"prioclass", int(p.ioprio >> 13)}, {"prio", int(p.ioprio & 7)},
			{name, withMean(latJSON(p.h, j.ClatPercentiles || j.LatPercentiles, plus, pl), exactMean(p.h, p.sum))}})
	}
	return out
}

// latJSON is fio's {min, max, mean, stddev, N[, percentile][, bins]}.
// Percentiles appear only when there are samples, as in fio.
func latJSON(h *hist.Histogram, pct, plus bool, list []float64) obj {
	o := obj{{"min", h.Min()}, {"max", h.Max()}, {"mean", h.Mean()}, {"stddev", h.StdDev()}, {"N", h.Count()}}
	if !pct || h.Count() == 0 {
		return o
	}
	p := obj{}
	for i, v := range fioPercentiles(h, list) {
		p = append(p, kv{fmt.Sprintf("%f", list[i]), v})
	}
	o = append(o, kv{"percentile", p})
	if plus {
		bins := obj{}
		for _, b := range h.Buckets() {
			bins = append(bins, kv{fmt.Sprint(b.To), b.Count})
		}
		o = append(o, kv{"bins", bins})
	}
	return o
}

// fioPercentiles are h's values at list as fio ranks them (stat.c's
// calc_clat_percentiles: the first bin whose cumulative count reaches
// p/100 of the total, i.e. rank ceil(p/100·N)), so that they match what
// fio's own latency logs give (t/latency_percentiles.py checks this).
func fioPercentiles(h *hist.Histogram, list []float64) []int64 {
	n := h.Count()
	ranks := make([]int64, len(list))
	for i, p := range list {
		ranks[i] = max(int64(math.Ceil(p/100*float64(n))), 1)
	}
	return h.ValuesAtRanks(ranks)
}

// withMean sets a latency object's mean.
func withMean(o obj, mean float64) obj {
	for i := range o {
		if o[i].k == "mean" {
			o[i].v = mean
		}
	}
	return o
}

// errnoOf is fio's "error" field: the errno that stopped the job, 1 for
// an error without one, 0 for success.
func errnoOf(err error) int {
	var errno unix.Errno
	switch {
	case err == nil:
		return 0
	case errors.As(err, &errno):
		return int(errno)
	}
	return 1
}

func cpuPct(cpu, runtime time.Duration) float64 {
	if runtime <= 0 {
		return 0
	}
	return float64(cpu) * 100 / float64(runtime)
}

var (
	levelLabels = []string{"1", "2", "4", "8", "16", "32", ">=64"}
	batchLabels = []string{"0", "4", "8", "16", "32", "64", ">=64"}
	nsLabels    = []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"}
	msLabels    = []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"}
)

// bucketsJSON renders depth buckets as percentages of total. fio shows
// levels 1..16 at a 0.1% floor when anything at all was queued; we show
// exact shares.
func bucketsJSON(b depthBuckets, total int64, labels []string, _ bool) obj {
	o := obj{}
	for i, l := range labels {
		v := 0.0
		if total > 0 {
			v = float64(b[i]) * 100 / float64(total)
		}
		o = append(o, kv{l, v})
	}
	return o
}

// latBucketsJSON spreads the latencies in [unit, 1000*unit) (or, for the ms
// scale, everything from 1 ms) over fio's bucket edges, in percent.
func latBucketsJSON(h *hist.Histogram, unit float64, labels []string) obj {
	counts := make([]int64, len(labels))
	for _, b := range h.Buckets() {
		v := float64(b.From) / unit
		if v >= 1000 && len(labels) == len(nsLabels) {
			continue
		}
		if unit > 1 && v < 1 {
			continue
		}
		counts[latIndex(v, len(labels))] += b.Count
	}
	o := obj{}
	for i, l := range labels {
		v := 0.0
		if h.Count() > 0 {
			v = float64(counts[i]) * 100 / float64(h.Count())
		}
		o = append(o, kv{l, v})
	}
	return o
}

// latIndex is fio's io_u_mark_lat_* bucket for v in the current unit.
func latIndex(v float64, n int) int {
	edges := []float64{2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000}
	for i, e := range edges {
		if v < e && i < n {
			return i
		}
	}
	return n - 1
}

func disksJSON(ds []diskUtil) []obj {
	out := []obj{}
	for _, d := range ds {
		out = append(out, obj{
			{"name", d.name}, {"read_ios", d.d.readIOs}, {"write_ios", d.d.writeIOs},
			{"read_merges", d.d.readMerges}, {"write_merges", d.d.writeMerges},
			{"read_ticks", d.d.readTicks}, {"write_ticks", d.d.writeTicks},
			{"in_queue", d.d.inQueue}, {"util", d.util},
		})
	}
	return out
}
