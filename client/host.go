package client

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// HostKnob is one host knob on one target of one worker, as a run set it:
// the value before, the value written and the value read back.
type HostKnob struct {
	Worker string `json:"worker"`
	Knob   string `json:"knob"`
	Target string `json:"target"`
	Before string `json:"before"`
	Set    string `json:"set"`
	Read   string `json:"read"`
}

// Differs reports whether the kernel shows another value than was set
// (it clamps nr_requests and max_sectors_kb).
func (k HostKnob) Differs() bool { return k.Read != k.Set }

// HostKnobs lists a run's host knobs per worker, as each worker applied
// them for the first phase it ran (every phase applies the same values;
// later phases only repeat them).
func HostKnobs(run *writepathv1.Run) []HostKnob {
	var out []HostKnob
	seen := map[string]bool{}
	for _, ph := range run.GetPhases() {
		for _, pw := range ph.GetWorkers() {
			for _, h := range pw.GetHost() {
				key := pw.GetWorker() + "\x00" + h.GetKnob() + "\x00" + h.GetTarget()
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, HostKnob{Worker: pw.GetWorker(), Knob: h.GetKnob(), Target: h.GetTarget(),
					Before: h.GetBefore(), Set: h.GetSet(), Read: h.GetRead()})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b HostKnob) int { return strings.Compare(a.Worker, b.Worker) })
	return out
}

// writeHost prints a run's host knobs: per worker and target, before,
// set and read back, marking what the kernel changed.
func writeHost(w io.Writer, knobs []HostKnob) error {
	if len(knobs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nhost knobs (set around every phase, restored after):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  worker\tknob\ttarget\tbefore\tset\tread back\t")
	for _, k := range knobs {
		read := k.Read
		if k.Differs() {
			read += "  (the kernel's, not the value set)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t\n", k.Worker, k.Knob, k.Target, k.Before, k.Set, read)
	}
	return tw.Flush()
}

// HostRow is one host knob of two runs side by side: each run's values
// read back (all its workers', when they differ).
type HostRow struct {
	Knob, Target string
	A, B         string
}

// CompareHost lines up the host knobs of two runs; a knob one run did not
// set shows "-" there.
func CompareHost(a, b *Summary) []HostRow {
	va, vb := hostValues(a.Host), hostValues(b.Host)
	var keys []string
	for _, k := range append(slices.Clone(a.Host), b.Host...) {
		if key := k.Knob + " " + k.Target; !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	var out []HostRow
	for _, key := range keys {
		knob, target, _ := strings.Cut(key, " ")
		out = append(out, HostRow{Knob: knob, Target: target, A: orDash(va[key]), B: orDash(vb[key])})
	}
	return out
}

// hostValues maps "knob target" to the distinct values read back, with
// the value set beside one the kernel changed.
func hostValues(knobs []HostKnob) map[string]string {
	out := map[string]string{}
	for _, k := range knobs {
		v := k.Read
		if k.Differs() {
			v += " (set " + k.Set + ")"
		}
		key := k.Knob + " " + k.Target
		if cur := out[key]; cur == "" {
			out[key] = v
		} else if !slices.Contains(strings.Split(cur, " / "), v) {
			out[key] = cur + " / " + v
		}
	}
	return out
}

func writeHostComparison(w io.Writer, rows []HostRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nhost knobs (read back):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  knob\ttarget\tA\tB\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", r.Knob, r.Target, r.A, r.B)
	}
	return tw.Flush()
}

// HostLabel is what a campaign cell's label adds about its host knobs:
// the values the kernel read back where they differ from those set, over
// every run of the cell ("nr_requests read 4"); "" when all match.
func HostLabel(runs []*writepathv1.Run) string {
	var parts []string
	for _, r := range runs {
		for _, k := range HostKnobs(r) {
			if p := k.Knob + " read " + k.Read; k.Differs() && !slices.Contains(parts, p) {
				parts = append(parts, p)
			}
		}
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
