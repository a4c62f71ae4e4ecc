package fio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/proto"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// allClients is the name of fio's merged row in client/server mode.
const allClients = "All clients"

// outputFor is the fio kind's workload.Meta.Output: a printer of a run's
// merged result when the spec names an output format (--output-format,
// --minimal, --output), nil otherwise.
func outputFor(b []byte) workload.OutputFunc {
	spec := &fiov1.Spec{}
	if proto.Unmarshal(b, spec) != nil {
		return nil
	}
	// OutputFormats is set only by the flags (OutputFormat always is, to
	// fio's default normal).
	if len(spec.OutputFormats) == 0 && spec.Output == "" {
		return nil
	}
	return func(w io.Writer, parts []workload.Part) error {
		if spec.Output == "" {
			return WriteMerged(w, spec, parts)
		}
		// --output names a file where the command runs, as fio's
		// client writes its output locally.
		f, err := os.Create(spec.Output)
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		if err := WriteMerged(f, spec, parts); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// WriteMerged prints the workers' results of one run of spec in the
// output formats it asks for. One worker prints exactly what fio prints
// for a local run. Several print what fio prints in client/server mode
// (`fio --client=h1 --client=h2`), the shape multi-host fio scripts read:
// JSON's "client_stats" holds each worker's rows with "hostname" (the
// worker's name; "port" is 0, workers have no fio port) and then one
// "All clients" row, the merge of every row of every worker (histograms
// merged bucket for bucket, bandwidth and IOPS summed as concurrent
// streams, as fio's sum_thread_stats); normal output prefixes each
// worker's lines with "<worker> " and ends with the "All clients" block;
// terse prints each worker's lines and then the "All clients" line.
// Workers without a summary (failed before the end) are left out.
func WriteMerged(out io.Writer, spec *fiov1.Spec, parts []workload.Part) error {
	var views []*view
	var errs []error
	for _, p := range parts {
		if len(p.Summary) == 0 {
			continue
		}
		v, err := decodeSummary(p.Summary, spec, p.Worker)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		views = append(views, v)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	switch len(views) {
	case 0:
		return errors.New("fio: no worker reported a result")
	case 1:
		views[0].host = ""
		return writeView(out, views[0])
	}
	all, err := mergeViews(views)
	if err != nil {
		return err
	}
	for _, f := range formats(spec) {
		switch f {
		case fiov1.OutputFormat_OUTPUT_FORMAT_JSON, fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS:
			err = writeClientJSON(out, views, all, f == fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS)
		case fiov1.OutputFormat_OUTPUT_FORMAT_TERSE:
			err = writeClientTerse(out, views, all)
		default:
			err = writeClientText(out, views, all)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeViews is fio's "All clients" row: every row of every worker
// summed into one, in a view of its own (the last worker's host, as fio
// tags it with the client whose stats completed the sum).
func mergeViews(views []*view) (*view, error) {
	last := views[len(views)-1]
	all := &view{version: last.version, start: views[0].start, spec: last.spec, host: last.host}
	st := newJobStats()
	st.jobs = 0
	var first *entry
	var total [nDirs]float64
	for _, v := range views {
		all.elapsed = max(all.elapsed, v.elapsed)
		if v.start.Before(all.start) {
			all.start = v.start
		}
		for i := range v.entries {
			e := &v.entries[i]
			if first == nil {
				first = e
			}
			if err := st.merge(e.st, true); err != nil {
				return nil, fmt.Errorf("merge %s of %s: %w", e.name, v.host, err)
			}
			for d := range total {
				total[d] += bandwidth(e.st, d)
			}
		}
	}
	if first == nil {
		return nil, errors.New("fio: the workers reported no jobs")
	}
	e := entry{name: allClients, group: last.entries[len(last.entries)-1].group, job: first.job, st: st}
	for d := range total {
		if total[d] > 0 {
			e.bwShare[d] = bandwidth(st, d) * 100 / total[d]
		}
	}
	all.entries = []entry{e}
	return all, nil
}

// writeClientJSON is fio's client/server JSON.
func writeClientJSON(out io.Writer, views []*view, all *view, plus bool) error {
	var stats, disks []obj
	for _, v := range append(append([]*view{}, views...), all) {
		for _, e := range v.entries {
			o := jobJSON(e, v, plus)
			if v == all {
				o = withoutKey(o, "job options") // fio's merged row has none
			}
			stats = append(stats, append(o, kv{"hostname", v.host}, kv{"port", 0}))
		}
		if v == all {
			break
		}
		for _, d := range disksJSON(v.disks) {
			disks = append(disks, append(d, kv{"hostname", v.host}, kv{"port", 0}))
		}
	}
	if disks == nil {
		disks = []obj{}
	}
	top := obj{
		{"fio version", versionString(all.version)},
		{"timestamp", all.start.Unix()},
		{"time", fioTime(all.start)},
		{"global options", optionsJSON(all.spec.GlobalOptions)},
		{"client_stats", stats},
		{"disk_util", disks},
	}
	// fio's client starts its JSON with an empty line.
	if _, err := io.WriteString(out, "\n"); err != nil {
		return err
	}
	return writeJSON(out, top)
}

func withoutKey(o obj, k string) obj {
	out := make(obj, 0, len(o))
	for _, m := range o {
		if m.k != k {
			out = append(out, m)
		}
	}
	return out
}

// writeClientTerse is each worker's terse lines, then the "All clients"
// line (fio's client prints the servers' terse text unprefixed).
func writeClientTerse(out io.Writer, views []*view, all *view) error {
	for _, v := range views {
		if err := writeTerseView(out, v); err != nil {
			return err
		}
	}
	b := bufio.NewWriter(out)
	terseEntry(b, &all.entries[0], all, groupTotals([]*entry{&all.entries[0]}))
	return b.Flush()
}

// writeClientText is each worker's normal output with "<worker> " before
// every line, then the "All clients" block.
func writeClientText(out io.Writer, views []*view, all *view) error {
	for _, v := range views {
		var buf bytes.Buffer
		if err := writeTextView(&buf, v); err != nil {
			return err
		}
		if err := prefixLines(out, "<"+v.host+"> ", buf.String()); err != nil {
			return err
		}
	}
	b := bufio.NewWriter(out)
	all.pid = 0
	textEntry(b, all.entries[0], all)
	return b.Flush()
}

func prefixLines(out io.Writer, prefix, text string) error {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			b.WriteString(prefix)
			b.WriteString(line)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}
