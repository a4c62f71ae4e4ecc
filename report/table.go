package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/writepath/writepath/campaign"
)

// Format names an output format for tables.
type Format string

// Table formats.
const (
	Text     Format = "table"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
)

// ParseFormat accepts the names users type.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Text, "text", "":
		return Text, nil
	case Markdown, "md":
		return Markdown, nil
	case CSV:
		return CSV, nil
	case JSON:
		return JSON, nil
	}
	return "", fmt.Errorf("unknown format %q (table, markdown, csv, json)", s)
}

// WriteCampaignTable writes t in format f: one row per cell, per group the
// median throughput, its round range, p99 and the delta against baseline.
func WriteCampaignTable(w io.Writer, t campaign.Table, unit string, f Format) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	case CSV:
		return writeCSV(w, t, unit)
	case Markdown:
		return writeMarkdown(w, t, unit)
	default:
		return writeText(w, t, unit)
	}
}

func header(t campaign.Table, unit string) []string {
	h := []string{"cell"}
	dev := traced(t)
	for _, g := range t.Groups {
		h = append(h, g+" "+unit, g+" p99")
		if dev {
			h = append(h, g+" dev p99")
		}
		h = append(h, g+" Δ")
	}
	return h
}

// traced reports whether any cell has the devices' write latency (runs
// with block tracing): only then do the tables have its column.
func traced(t campaign.Table) bool {
	for _, r := range t.Rows {
		for _, a := range r.Aggs {
			if a.DeviceP99 > 0 {
				return true
			}
		}
	}
	return false
}

func cells(t campaign.Table, r campaign.Row) []string {
	out := []string{RowLabel(r)}
	dev := traced(t)
	for _, a := range r.Aggs {
		if a.Rounds == 0 {
			out = append(out, "-", "-", "-")
			if dev {
				out = append(out, "-")
			}
			continue
		}
		tp := fmt.Sprintf("%s (%s–%s)", num(a.Throughput), num(a.ThroughputMin), num(a.ThroughputMax))
		delta := "base"
		if r.Label != t.Baseline {
			delta = fmt.Sprintf("%+.1f%%", a.DeltaPct)
		}
		out = append(out, tp, ms(a.P99))
		if dev {
			devP99 := "-"
			if a.DeviceP99 > 0 {
				devP99 = ms(a.DeviceP99)
			}
			out = append(out, devP99)
		}
		out = append(out, delta)
	}
	return out
}

func writeText(w io.Writer, t campaign.Table, unit string) error {
	fmt.Fprintf(w, "campaign %s — median of rounds over %s (min–max), p99 from merged histograms", t.Campaign, t.Window)
	if traced(t) {
		fmt.Fprint(w, "; dev p99: the devices' write latency (block D2C)")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header(t, unit), "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(cells(t, r), "\t"))
	}
	return tw.Flush()
}

func writeMarkdown(w io.Writer, t campaign.Table, unit string) error {
	h := header(t, unit)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
	for _, r := range t.Rows {
		if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(cells(t, r), " | ")); err != nil {
			return err
		}
	}
	return nil
}

func writeCSV(w io.Writer, t campaign.Table, unit string) error {
	cw := csv.NewWriter(w)
	h := []string{"cell", "group", "rounds", unit + "_median", unit + "_min", unit + "_max", "p99_ms_median", "p99_ms_min", "p99_ms_max", "delta_pct"}
	dev := traced(t)
	if dev {
		h = append(h, "device_write_p99_ms_median")
	}
	if err := cw.Write(h); err != nil {
		return err
	}
	for _, r := range t.Rows {
		for gi, a := range r.Aggs {
			rec := []string{RowLabel(r), t.Groups[gi], strconv.Itoa(a.Rounds),
				f2(a.Throughput), f2(a.ThroughputMin), f2(a.ThroughputMax),
				f3(float64(a.P99) / 1e6), f3(float64(a.P99Min) / 1e6), f3(float64(a.P99Max) / 1e6), f2(a.DeltaPct)}
			if dev {
				rec = append(rec, f3(float64(a.DeviceP99)/1e6))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// RowLabel is a row's cell label with what its host knobs read back when
// the kernel kept other values than those set.
func RowLabel(r campaign.Row) string {
	if r.Host == "" {
		return r.Label
	}
	return r.Label + " [" + r.Host + "]"
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// num prints a rate with thousands separators, as the write-ups do.
func num(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ms prints nanoseconds as milliseconds with sensible precision.
func ms(ns int64) string {
	v := float64(ns) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.2f ms", v)
	case v >= 0.01:
		// Page-cache writes and fast NVMe syncs sit in microseconds; two
		// decimals of a millisecond would print them as 0.00.
		return fmt.Sprintf("%.0f µs", v*1000)
	}
	return fmt.Sprintf("%.1f µs", v*1000)
}
