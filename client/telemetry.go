package client

import (
	"fmt"
	"slices"
	"strings"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/diskstats"
)

// Show is what `run --show` asks to print.
type Show struct {
	Lines, Summary bool // an interval line per merged interval; the summary at the end
	IOStat, InnoDB bool // telemetry columns on the lines
	// Block and Syscalls add the kernel-evidence series (package series)
	// to the lines.
	Block, Syscalls bool
	Disk            bool // a disk profile's credits and cap on the lines
}

// ParseShow parses a comma-separated --show value: lines, summary, none,
// iostat, innodb, block, syscalls, disk. Telemetry columns alone imply lines
// and summary.
func ParseShow(s string) (Show, error) {
	var sh Show
	plain := false
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "lines":
			sh.Lines, plain = true, true
		case "summary":
			sh.Summary, plain = true, true
		case "none":
			plain = true
		case "iostat":
			sh.IOStat = true
		case "innodb":
			sh.InnoDB = true
		case "block":
			sh.Block = true
		case "syscalls":
			sh.Syscalls = true
		case "disk":
			sh.Disk = true
		default:
			return Show{}, fmt.Errorf("--show %q: unknown %q; want a comma list of lines, summary, none, iostat, innodb, block, syscalls, disk", s, w)
		}
	}
	if !plain {
		sh.Lines, sh.Summary = true, true
	}
	return sh, nil
}

// DeviceColumn is one iostat -x column, read from the figures of a window.
type DeviceColumn struct {
	Name string // iostat's header ("w/s")
	Get  func(*diskstats.Stats) float64
}

// lineColumns are the device columns of an interval line: the write
// path's (FIELD.md: merges, await, queue, utilisation). A table, never
// written.
var lineColumns = []DeviceColumn{
	{"w/s", func(s *diskstats.Stats) float64 { return s.WritesPerSec }},
	{"wkB/s", func(s *diskstats.Stats) float64 { return s.WriteKBPerSec }},
	{"wrqm/s", func(s *diskstats.Stats) float64 { return s.WriteMergesPerSec }},
	{"w_await", func(s *diskstats.Stats) float64 { return s.WriteAwaitMs }},
	{"aqu-sz", func(s *diskstats.Stats) float64 { return s.QueueSize }},
	{"%util", func(s *diskstats.Stats) float64 { return s.UtilPct }},
}

// SummaryColumns returns the device columns of a run's summary.
func SummaryColumns() []DeviceColumn { return slices.Clone(summaryColumns) }

// summaryColumns are the device columns of a run's summary. A table, never
// written.
var summaryColumns = []DeviceColumn{
	{"r/s", func(s *diskstats.Stats) float64 { return s.ReadsPerSec }},
	{"rkB/s", func(s *diskstats.Stats) float64 { return s.ReadKBPerSec }},
	lineColumns[0], lineColumns[1], lineColumns[2],
	{"%wrqm", func(s *diskstats.Stats) float64 { return s.WriteMergePct }},
	lineColumns[3],
	{"wareq-sz", func(s *diskstats.Stats) float64 { return s.WriteReqKB }},
	lineColumns[4], lineColumns[5],
	{"f/s", func(s *diskstats.Stats) float64 { return s.FlushesPerSec }},
	{"f_await", func(s *diskstats.Stats) float64 { return s.FlushAwaitMs }},
}

// DeviceFigures returns a device's iostat -x figures over its interval
// (results.DeviceFigures: the one formula for lines and summaries).
func DeviceFigures(d *writepathv1.DeviceStats) diskstats.Stats { return results.DeviceFigures(d) }

// TelemetryText is the telemetry part of an interval line: per worker and
// device the line columns, and the InnoDB gauges (log_waits is the
// increase over the last status sample, ~1 s; dirty pages; checkpoint age
// in MiB). The worker is named only when several report.
func TelemetryText(mi *writepathv1.MergedInterval, sh Show) string {
	var b strings.Builder
	named := len(mi.GetTelemetry()) > 1
	for _, wt := range mi.GetTelemetry() {
		who := ""
		if named {
			who = wt.GetWorker() + ":"
		}
		if sh.IOStat {
			writeDevices(&b, who, wt.GetTelemetry().GetDevices())
		}
		if sh.InnoDB {
			writeInnoDB(&b, who, wt.GetGauges())
		}
		if sh.Disk {
			writeDisk(&b, who, wt.GetTelemetry().GetValues())
		}
	}
	return b.String()
}

// writeDisk prints a disk profile's cap in force and credit balance
// (package diskprofile's "disk.*" values).
func writeDisk(b *strings.Builder, who string, v map[string]float64) {
	iops, ok := v["disk.cap_iops"]
	if !ok {
		return
	}
	fmt.Fprintf(b, "  | %sdisk cap %s IOPS %s MB/s", who, figure(iops), figure(v["disk.cap_mbps"]))
	if c, ok := v["disk.credits"]; ok {
		fmt.Fprintf(b, " credits %.0f (%.0f%%)", c, v["disk.credits_pct"])
	}
}

func writeDevices(b *strings.Builder, who string, devs []*writepathv1.DeviceStats) {
	for _, d := range devs {
		s := DeviceFigures(d)
		fmt.Fprintf(b, "  | %s%s", who, d.GetDevice())
		for _, c := range lineColumns {
			fmt.Fprintf(b, " %s %s", c.Name, figure(c.Get(&s)))
		}
	}
}

func writeInnoDB(b *strings.Builder, who string, g map[string]int64) {
	var parts []string
	for _, m := range InnoDBMetrics {
		v, ok := m.Latest(g)
		if !ok {
			continue
		}
		p := m.Key + " " + figure(v)
		if m.Unit == "MiB" {
			p += " MiB"
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "  | %sinnodb %s", who, strings.Join(parts, " "))
	}
}

// figure prints a value with about three significant digits.
func figure(v float64) string {
	switch {
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
