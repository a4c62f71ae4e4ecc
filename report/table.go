package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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

// column is one column per group of a campaign table.
type column struct {
	head string                                 // header after the group's name
	csv  []string                               // CSV header names
	text func(a campaign.Agg, base bool) string // text and markdown cell
	vals func(a campaign.Agg) []string          // CSV values
	off  func(t campaign.Table) bool            // leave out (nil: always in)
	// legend explains the column in the text table's title line.
	legend string
}

// KindColumns names the columns a kind may declare for its campaign
// tables (workload.Meta.Tables.Columns); DefaultColumns are those of a
// kind that declares none.
var (
	KindColumns = []string{"throughput", "MB/s", "p95", "p99", "fsync p99", "dev p99", "delta",
		"recovery", "start>query", "kill>commit", "lost", "verdict", "load tps", "load p99", "delta recovery"}
	DefaultColumns = []string{"throughput", "p99", "dev p99", "delta"}
)

// columns are a table's columns per group, as its kind declares them
// (fio: IOPS with the rounds' range, MB/s, p99 and the syncs' p99 when
// there are syncs; oltp: tps, sysbench's p95 and p99; crash: the recovery
// figures, lost commits summed, the verdict, the load's tps and p99), then
// the campaign's telemetry columns. A name report does not know is left
// out (a kind's table never fails on it: CheckKindColumns tells).
func columns(t campaign.Table, unit string) []column {
	names := t.KindColumns
	if names == nil {
		names = DefaultColumns
	}
	var cols []column
	for _, n := range names {
		if c, ok := kindColumn(n, unit); ok {
			cols = append(cols, c)
		}
	}
	for _, c := range t.Columns {
		cols = append(cols, telemetryColumn(c))
	}
	var out []column
	for _, c := range cols {
		if c.off == nil || !c.off(t) {
			out = append(out, c)
		}
	}
	return out
}

// CheckKindColumns reports the first of names that is not one of
// KindColumns.
func CheckKindColumns(names []string) error {
	for _, n := range names {
		if !slices.Contains(KindColumns, n) {
			return fmt.Errorf("unknown campaign column %q (known: %s)", n, strings.Join(KindColumns, ", "))
		}
	}
	return nil
}

// kindColumn is the column of a name of KindColumns. The throughput's
// delta against the baseline is "delta"; crash's is recovery time's.
func kindColumn(name, unit string) (column, bool) {
	switch name {
	case "throughput":
		return column{head: unit, csv: []string{unit + "_median", unit + "_min", unit + "_max"},
			text: func(a campaign.Agg, _ bool) string {
				return fmt.Sprintf("%s (%s–%s)", num(a.Throughput), num(a.ThroughputMin), num(a.ThroughputMax))
			},
			vals: func(a campaign.Agg) []string {
				return []string{f2(a.Throughput), f2(a.ThroughputMin), f2(a.ThroughputMax)}
			}}, true
	case "MB/s":
		return column{head: "MB/s", csv: []string{"MBps_median"},
			text: func(a campaign.Agg, _ bool) string { return fmt.Sprintf("%.1f", a.MBps) },
			vals: func(a campaign.Agg) []string { return []string{f2(a.MBps)} }}, true
	case "p95":
		return column{head: "p95", csv: []string{"p95_ms_median"},
			text: func(a campaign.Agg, _ bool) string { return ms(a.P95) },
			vals: func(a campaign.Agg) []string { return []string{f3(float64(a.P95) / 1e6)} }}, true
	case "p99":
		return column{head: "p99", csv: []string{"p99_ms_median", "p99_ms_min", "p99_ms_max"},
			text: func(a campaign.Agg, _ bool) string { return ms(a.P99) },
			vals: func(a campaign.Agg) []string {
				return []string{f3(float64(a.P99) / 1e6), f3(float64(a.P99Min) / 1e6), f3(float64(a.P99Max) / 1e6)}
			}}, true
	case "fsync p99":
		return column{head: "fsync p99", csv: []string{"fsync_p99_ms_median"},
			text: func(a campaign.Agg, _ bool) string { return msOr(a.SyncP99) },
			vals: func(a campaign.Agg) []string { return []string{f3(float64(a.SyncP99) / 1e6)} },
			off:  func(t campaign.Table) bool { return !synced(t) }}, true
	case "dev p99":
		return column{head: "dev p99", csv: []string{"device_write_p99_ms_median"},
			text: func(a campaign.Agg, _ bool) string { return msOr(a.DeviceP99) },
			vals: func(a campaign.Agg) []string { return []string{f3(float64(a.DeviceP99) / 1e6)} },
			off:  func(t campaign.Table) bool { return !traced(t) }}, true
	case "delta":
		return column{head: "Δ", csv: []string{"delta_pct"},
			text: func(a campaign.Agg, base bool) string {
				if base {
					return "base"
				}
				return fmt.Sprintf("%+.1f%%", a.DeltaPct)
			},
			vals: func(a campaign.Agg) []string { return []string{f2(a.DeltaPct)} }}, true
	case "recovery":
		c := figureColumn("recovery", campaign.FigRecoveryMS)
		c.legend = "recovery: first recovery marker to ready"
		return c, true
	case "start>query":
		c := figureColumn("start>query", campaign.FigStartQueryMS)
		c.legend = "start>query: process start to first query"
		return c, true
	case "kill>commit":
		c := figureColumn("kill>commit", campaign.FigKillCommitMS)
		c.legend = "kill>commit: kill to first commit (median, min–max over crash rounds)"
		return c, true
	case "lost":
		return column{head: "lost", csv: []string{"lost_acknowledged"},
			text:   func(a campaign.Agg, _ bool) string { return sumOr(a, campaign.FigLost) },
			vals:   func(a campaign.Agg) []string { return []string{f0(a.Figures[campaign.FigLost].Sum)} },
			legend: "lost: acknowledged commits missing after restart (sum)"}, true
	case "verdict":
		return column{head: "verdict", csv: []string{"verdict"},
			text: func(a campaign.Agg, _ bool) string { return Verdict(a) },
			vals: func(a campaign.Agg) []string { return []string{Verdict(a)} }}, true
	// The load's own figures up to each kill (crash): its intervals also
	// span the restarts, when nothing commits.
	case "load tps":
		return column{head: "tps", csv: []string{"load_tps_median"},
			text: func(a campaign.Agg, _ bool) string { return figOr(a, campaign.FigLoadTPS, num) },
			vals: func(a campaign.Agg) []string { return []string{f2(a.Figures[campaign.FigLoadTPS].Median)} }}, true
	case "load p99":
		return column{head: "p99", csv: []string{"load_p99_ms_median"},
			text: func(a campaign.Agg, _ bool) string { return figOr(a, campaign.FigLoadP99MS, msF) },
			vals: func(a campaign.Agg) []string { return []string{f3(a.Figures[campaign.FigLoadP99MS].Median)} }}, true
	case "delta recovery":
		return column{head: "Δ recovery", csv: []string{"recovery_delta_pct"},
			text: func(a campaign.Agg, base bool) string {
				f, ok := a.Figures[campaign.FigRecoveryMS]
				switch {
				case base:
					return "base"
				case !ok:
					return "-"
				}
				return fmt.Sprintf("%+.1f%%", f.DeltaPct)
			},
			vals: func(a campaign.Agg) []string { return []string{f2(a.Figures[campaign.FigRecoveryMS].DeltaPct)} }}, true
	}
	return column{}, false
}

// figureColumn is a time figure of a kind (ms): the median with the range
// over every sample of the cell.
func figureColumn(head, key string) column {
	return column{head: head, csv: []string{key + "_median", key + "_min", key + "_max"},
		text: func(a campaign.Agg, _ bool) string {
			f, ok := a.Figures[key]
			if !ok {
				return "-"
			}
			if f.N == 1 {
				return msF(f.Median)
			}
			return fmt.Sprintf("%s (%s–%s)", msF(f.Median), msF(f.Min), msF(f.Max))
		},
		vals: func(a campaign.Agg) []string {
			f := a.Figures[key]
			return []string{f3(f.Median), f3(f.Min), f3(f.Max)}
		}}
}

// telemetryColumn is a telemetry figure's median over the cell's rounds.
func telemetryColumn(c campaign.Column) column {
	head := c.Key
	if c.Unit != "" && !strings.HasSuffix(c.Key, c.Unit) && !strings.HasPrefix(c.Key, c.Unit) {
		head += " " + c.Unit
	}
	return column{head: head, csv: []string{c.Key},
		text: func(a campaign.Agg, _ bool) string {
			f, ok := a.Figures[c.Key]
			if !ok {
				return "-"
			}
			return figure(f.Median)
		},
		vals: func(a campaign.Agg) []string {
			f, ok := a.Figures[c.Key]
			if !ok {
				return []string{""}
			}
			return []string{strconv.FormatFloat(f.Median, 'f', -1, 64)}
		}}
}

// Verdict is a crash cell's verdict over its crash rounds: "ok", or what
// went wrong (acknowledged commits lost, rounds damaged, failed).
func Verdict(a campaign.Agg) string {
	n := a.Figures[campaign.FigCrashRounds].Sum
	if n == 0 {
		return "-"
	}
	var bad []string
	if l := a.Figures[campaign.FigLost].Sum; l > 0 {
		bad = append(bad, fmt.Sprintf("LOST %s commits", f0(l)))
	}
	if d := a.Figures[campaign.FigDamaged].Sum; d > 0 {
		s := fmt.Sprintf("damaged %s/%s", f0(d), f0(n))
		if g := a.Figures[campaign.FigKnownGap].Sum; g > 0 {
			s += fmt.Sprintf(" (%s known gap)", f0(g))
		}
		bad = append(bad, s)
	}
	if f := a.Figures[campaign.FigFailed].Sum; f > 0 {
		bad = append(bad, fmt.Sprintf("failed %s/%s", f0(f), f0(n)))
	}
	if len(bad) == 0 {
		return "ok"
	}
	return strings.Join(bad, ", ")
}

func header(t campaign.Table, unit string) []string {
	h := []string{"cell"}
	cols := columns(t, unit)
	for _, g := range t.Groups {
		for _, c := range cols {
			h = append(h, g+" "+c.head)
		}
	}
	return h
}

// traced reports whether any cell has the devices' write latency (runs
// with block tracing): only then do the tables have its column.
func traced(t campaign.Table) bool {
	return anyAgg(t, func(a campaign.Agg) bool { return a.DeviceP99 > 0 })
}

// synced reports whether any cell's runs made syncs.
func synced(t campaign.Table) bool {
	return anyAgg(t, func(a campaign.Agg) bool { return a.SyncP99 > 0 })
}

func anyAgg(t campaign.Table, f func(campaign.Agg) bool) bool {
	for _, r := range t.Rows {
		for _, a := range r.Aggs {
			if f(a) {
				return true
			}
		}
	}
	return false
}

func cells(t campaign.Table, r campaign.Row, cols []column) []string {
	out := []string{RowLabel(r)}
	for _, a := range r.Aggs {
		for _, c := range cols {
			if a.Rounds == 0 {
				out = append(out, "-")
				continue
			}
			out = append(out, c.text(a, r.Label == t.Baseline))
		}
	}
	return out
}

func writeText(w io.Writer, t campaign.Table, unit string) error {
	fmt.Fprintf(w, "campaign %s — median of rounds over %s (min–max), p99 from merged histograms", t.Campaign, t.Window)
	var legends []string
	for _, c := range columns(t, unit) {
		if c.legend != "" {
			legends = append(legends, c.legend)
		}
	}
	if len(legends) > 0 {
		fmt.Fprint(w, "; "+strings.Join(legends, ", "))
	}
	if traced(t) {
		fmt.Fprint(w, "; dev p99: the devices' write latency (block D2C)")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header(t, unit), "\t"))
	cols := columns(t, unit)
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(cells(t, r, cols), "\t"))
	}
	return tw.Flush()
}

func writeMarkdown(w io.Writer, t campaign.Table, unit string) error {
	h := header(t, unit)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
	cols := columns(t, unit)
	for _, r := range t.Rows {
		if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(cells(t, r, cols), " | ")); err != nil {
			return err
		}
	}
	return nil
}

// writeCSV writes one record per cell and group. The first ten columns
// stay what they were (cell, group, rounds, throughput median/min/max, p99
// median/min/max, delta); the kind's and telemetry columns follow.
func writeCSV(w io.Writer, t campaign.Table, unit string) error {
	cw := csv.NewWriter(w)
	first := columns(campaign.Table{}, unit)
	firstVals := func(a campaign.Agg) []string {
		var v []string
		for _, c := range first {
			v = append(v, c.vals(a)...)
		}
		return v
	}
	h := []string{"cell", "group", "rounds", unit + "_median", unit + "_min", unit + "_max", "p99_ms_median", "p99_ms_min", "p99_ms_max", "delta_pct"}
	var rest []column
	for _, c := range columns(t, unit) {
		if !slices.Equal(c.csv, first[0].csv) && !slices.Equal(c.csv, first[1].csv) && !slices.Equal(c.csv, first[2].csv) {
			rest = append(rest, c)
			h = append(h, c.csv...)
		}
	}
	if err := cw.Write(h); err != nil {
		return err
	}
	for _, r := range t.Rows {
		for gi, a := range r.Aggs {
			rec := append([]string{RowLabel(r), t.Groups[gi], strconv.Itoa(a.Rounds)}, firstVals(a)...)
			for _, c := range rest {
				rec = append(rec, c.vals(a)...)
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

func f0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
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

// msOr is ms, or "-" for none.
func msOr(ns int64) string {
	if ns <= 0 {
		return "-"
	}
	return ms(ns)
}

// msF prints milliseconds as ms does.
func msF(v float64) string { return ms(int64(v * 1e6)) }

// figOr is a figure's median formatted, or "-" when the cell has none.
func figOr(a campaign.Agg, key string, format func(float64) string) string {
	f, ok := a.Figures[key]
	if !ok {
		return "-"
	}
	return format(f.Median)
}

// sumOr is a figure's sum, or "-" when the cell has none.
func sumOr(a campaign.Agg, key string) string {
	f, ok := a.Figures[key]
	if !ok {
		return "-"
	}
	return f0(f.Sum)
}

// figure prints a telemetry figure with the precision its size needs.
func figure(v float64) string {
	switch a := max(v, -v); {
	case a >= 1000:
		return num(v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// ms prints nanoseconds as milliseconds with sensible precision.
func ms(ns int64) string {
	v := float64(ns) / 1e6
	switch {
	case v >= 10_000:
		// Recovery times: "68.0 s" reads better than "68000 ms".
		return fmt.Sprintf("%.1f s", v/1000)
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
