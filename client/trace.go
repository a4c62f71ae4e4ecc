package client

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// SeriesSummary is one kernel-evidence series (package series: block.*,
// redo.*, sys.*) over a span. Latencies are in ms, sizes in bytes (Unit).
type SeriesSummary struct {
	Series string  `json:"series"`
	Family string  `json:"family"`
	Device string  `json:"device,omitempty"`
	Op     string  `json:"op"`
	Metric string  `json:"metric,omitempty"`
	Unit   string  `json:"unit"`
	Count  int64   `json:"count"`
	PerSec float64 `json:"per_sec"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p99_9"`
	Max    float64 `json:"max"`
}

func seriesSummary(s series.Series, h *hist.Histogram, seconds float64) SeriesSummary {
	scale, unit := 1e6, "ms"
	if s.Bytes() {
		scale, unit = 1, "bytes"
	}
	ps := h.Percentiles([]float64{50, 90, 99, 99.9})
	out := SeriesSummary{Series: s.Name, Family: s.Family, Device: s.Device, Op: s.Op, Metric: s.Metric, Unit: unit,
		Count: h.Count(), Mean: h.Mean() / scale, P50: float64(ps[0]) / scale, P90: float64(ps[1]) / scale,
		P99: float64(ps[2]) / scale, P999: float64(ps[3]) / scale, Max: float64(h.Max()) / scale}
	if seconds > 0 {
		out.PerSec = float64(h.Count()) / seconds
	}
	return out
}

// HgrmScale is the divisor `runs hgrm` prints an op's values with: ms for
// latencies, bytes for the size series.
func HgrmScale(op string) float64 {
	if s, ok := series.Parse(op); ok && s.Bytes() {
		return 1
	}
	return 1e6
}

// TraceText is the kernel-evidence part of an interval line, merged over
// the workers: with sh.Block per device and op the D2C p50/p99, the Q2D
// p99 where requests queued and the median request size, and redo
// reads/writes; with sh.Syscalls fsync/fdatasync count and p99 and the
// median write size.
func TraceText(mi *writepathv1.MergedInterval, sh Show) string {
	if !sh.Block && !sh.Syscalls {
		return ""
	}
	stats := map[string]*writepathv1.OpStats{}
	for _, s := range mi.GetStats() {
		stats[s.GetOp()] = s
	}
	var b strings.Builder
	if sh.Block {
		writeBlockLine(&b, stats)
	}
	if sh.Syscalls {
		writeSysLine(&b, stats)
	}
	return b.String()
}

func writeBlockLine(b *strings.Builder, stats map[string]*writepathv1.OpStats) {
	var devs []string
	for name := range stats {
		if s, ok := series.Parse(name); ok && s.Prefix == "block" && !slices.Contains(devs, s.Device) {
			devs = append(devs, s.Device)
		}
	}
	slices.Sort(devs)
	for _, dev := range devs {
		for _, op := range series.Ops {
			d2c := stats[series.Block(dev, op, series.D2C)]
			if d2c == nil || d2c.GetCount() == 0 {
				continue
			}
			fmt.Fprintf(b, "  | %s %s %d d2c p50 %s p99 %s", dev, op, d2c.GetCount(), msText(d2c.GetP50()), msText(d2c.GetP99()))
			if q := stats[series.Block(dev, op, series.Q2D)]; q != nil && q.GetCount() > 0 {
				fmt.Fprintf(b, " q2d p99 %s", msText(q.GetP99()))
			}
			if sz := stats[series.Block(dev, op, series.Bytes)]; sz != nil && sz.GetCount() > 0 && op != "flush" {
				fmt.Fprintf(b, " size p50 %s", sizeText(sz.GetP50()))
			}
		}
	}
	r, w := stats[series.Redo("read")], stats[series.Redo("write")]
	if r != nil || w != nil {
		fmt.Fprintf(b, "  | redo reads %d writes %d", r.GetCount(), w.GetCount())
	}
}

func writeSysLine(b *strings.Builder, stats map[string]*writepathv1.OpStats) {
	for _, name := range []string{series.SysFsync, series.SysFdatasync} {
		if s := stats[name]; s != nil && s.GetCount() > 0 {
			fmt.Fprintf(b, "  | %s %d p50 %s p99 %s", strings.TrimPrefix(name, "sys."), s.GetCount(), msText(s.GetP50()), msText(s.GetP99()))
		}
	}
	if s := stats[series.SysWriteBytes]; s != nil && s.GetCount() > 0 {
		fmt.Fprintf(b, "  | write %d size p50 %s p99 %s", s.GetCount(), sizeText(s.GetP50()), sizeText(s.GetP99()))
	}
}

// msText prints ns as ms with about three significant digits.
func msText(ns int64) string { return figure(float64(ns)/1e6) + "ms" }

// sizeText prints a byte count as B, KiB or MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return figure(float64(n)/(1<<20)) + "MiB"
	case n >= 1<<10:
		return figure(float64(n)/(1<<10)) + "KiB"
	}
	return fmt.Sprintf("%dB", n)
}

// writeSeries prints a span's kernel-evidence series: one row each.
func writeSeries(w io.Writer, who string, ss []SeriesSummary) error {
	if len(ss) == 0 {
		return nil
	}
	fmt.Fprintf(w, "  kernel evidence (%s; ms, or bytes for sizes):\n", who)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tseries\tcount\t/s\tmean\tp50\tp90\tp99\tp99.9\tmax\t")
	for _, s := range ss {
		f := func(v float64) string {
			if s.Unit == "bytes" {
				return fmt.Sprintf("%.0f", v)
			}
			return fmt.Sprintf("%.3f", v)
		}
		fmt.Fprintf(tw, "\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Series, s.Count, s.PerSec, f(s.Mean), f(s.P50), f(s.P90), f(s.P99), f(s.P999), f(s.Max))
	}
	return tw.Flush()
}
