package fio

import (
	"bufio"
	"fmt"
	"io"

	"github.com/writepath/writepath/hist"
)

// terseSlots is fio's FIO_IO_U_LIST_MAX_LEN: the percentile fields of a
// terse line, padded with "0%=0".
const terseSlots = 20

// writeTerse writes fio's terse (--minimal) lines, one per reported job,
// in the version the spec asks for (fio's default 3): fio's
// show_thread_status_terse_all, field for field. Latencies are in
// microseconds, bandwidth in KiB/s.
func writeTerseView(out io.Writer, v *view) error {
	b := bufio.NewWriter(out)
	for _, g := range groupsOf(v.entries) {
		agg := groupTotals(g)
		for _, e := range g {
			terseEntry(b, e, v, agg)
		}
	}
	return b.Flush()
}

func terseEntry(b *bufio.Writer, e *entry, v *view, agg [nDirs]float64) {
	ver := v.terseVersion()
	if ver == 2 {
		fmt.Fprintf(b, "2;%s;%d;%d", e.name, e.group, errnoOf(e.err))
	} else {
		fmt.Fprintf(b, "%d;%s;%s;%d;%d", ver, versionString(v.version), e.name, e.group, errnoOf(e.err))
	}
	terseDir(b, e, dirRead, agg[dirRead], ver)
	if !e.job.UnifiedRwReporting {
		terseDir(b, e, dirWrite, agg[dirWrite], ver)
		if ver == 2 || ver == 4 || ver == 5 {
			terseDir(b, e, dirTrim, agg[dirTrim], ver)
		}
	}
	st := e.st
	fmt.Fprintf(b, ";%f%%;%f%%;%d;%d;%d", cpuPct(st.usage.usr, st.runtime), cpuPct(st.usage.sys, st.runtime),
		st.usage.ctx, st.usage.majf, st.usage.minf)
	for i := range levelLabels {
		fmt.Fprintf(b, ";%3.1f%%", share(st.level[i], st.level.sum()))
	}
	lat := st.done
	us := latShares(lat, 1e3, nsLabels)
	ns := latShares(lat, 1, nsLabels)
	for _, v := range ns {
		us[0] += v // fio's stat_calc_lat_nu: nanoseconds count in the first bucket
	}
	for _, v := range us {
		fmt.Fprintf(b, ";%3.2f%%", v)
	}
	for _, v := range latShares(lat, 1e6, msLabels) {
		fmt.Fprintf(b, ";%3.2f%%", v)
	}
	if ver >= 3 {
		for _, d := range v.disks {
			fmt.Fprintf(b, ";%s;%d;%d;%d;%d;%d;%d;%d;%3.2f%%", d.name, d.d.readIOs, d.d.writeIOs,
				d.d.readMerges, d.d.writeMerges, d.d.readTicks, d.d.writeTicks, d.d.inQueue, d.util)
		}
	}
	if e.job.Description != "" {
		if ver == 2 {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, ";%s", e.job.Description)
	}
	b.WriteString("\n")
}

// terseDir is one direction's fields.
func terseDir(b *bufio.Writer, e *entry, d int, agg float64, ver int) {
	ds := e.st.dir[d]
	ms := e.st.wall.Milliseconds()
	if ds.ios == 0 {
		ms = 0
	}
	var bw, iops int64
	if ms > 0 {
		bw = ds.bytes * 1000 / ms / 1024
		iops = ds.ios * 1000 / ms
	}
	fmt.Fprintf(b, ";%d;%d;%d;%d", ds.bytes>>10, bw, iops, ms)
	terseLat(b, ds.slat)
	terseLat(b, ds.clat)
	var pct *hist.Histogram
	switch {
	case e.job.LatPercentiles:
		pct = ds.lat
	case e.job.ClatPercentiles:
		pct = ds.clat
	}
	list := percentilesOf(e.job)
	var vals []int64
	if pct != nil && pct.Count() > 0 {
		vals = fioPercentiles(pct, list)
	}
	for i := 0; i < terseSlots; i++ {
		if i >= len(vals) {
			b.WriteString(";0%=0")
			continue
		}
		fmt.Fprintf(b, ";%f%%=%d", list[i], vals[i]/1000)
	}
	terseLat(b, ds.lat)
	if ds.bw.n > 0 {
		pOfAgg := 100.0
		if agg > 0 {
			pOfAgg = min(ds.bw.mean*100/(agg/1024), 100)
		}
		fmt.Fprintf(b, ";%d;%d;%f%%;%f;%f", int64(ds.bw.min), int64(ds.bw.max), pOfAgg, ds.bw.mean, ds.bw.stddev())
	} else {
		fmt.Fprintf(b, ";%d;%d;%f%%;%f;%f", 0, 0, 0.0, 0.0, 0.0)
	}
	if ver == 5 {
		fmt.Fprintf(b, ";%d", ds.bw.n)
		fmt.Fprintf(b, ";%d;%d;%f;%f;%d", int64(ds.iops.min), int64(ds.iops.max), ds.iops.mean, ds.iops.stddev(), ds.iops.n)
	}
}

// terseLat is "min;max;mean;dev" in microseconds (zeros without samples).
func terseLat(b *bufio.Writer, h *hist.Histogram) {
	if h.Count() == 0 {
		fmt.Fprintf(b, ";%d;%d;%f;%f", 0, 0, 0.0, 0.0)
		return
	}
	fmt.Fprintf(b, ";%d;%d;%f;%f", h.Min()/1000, h.Max()/1000, h.Mean()/1000, h.StdDev()/1000)
}

func share(n, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(n) * 100 / float64(total)
}

// latShares are latBucketsJSON's percentages as a slice.
func latShares(h *hist.Histogram, unit float64, labels []string) []float64 {
	o := latBucketsJSON(h, unit, labels)
	out := make([]float64, len(o))
	for i, m := range o {
		out[i] = m.v.(float64)
	}
	return out
}
