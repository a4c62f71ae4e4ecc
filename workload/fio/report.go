package fio

import (
	"bytes"
	"fmt"
	"io"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// FioVersion is the fio release whose options and formats this engine
// speaks; reports give it first ("fio-3.33"), so scripts matching ^fio-3
// read them, with writepath's own version after it.
const FioVersion = "fio-3.33"

// versionString is what --version and the reports' "fio version" say.
func versionString(writepath string) string {
	if writepath == "" {
		return FioVersion + " (writepath)"
	}
	return FioVersion + " (writepath " + writepath + ")"
}

// entry is one reported job: a clone, or with group_reporting the merge of
// every clone of its group.
type entry struct {
	name    string
	group   int
	job     *fiov1.Job // the first clone's job: its options are shown
	st      *jobStats
	err     error
	bwShare [nDirs]float64 // percent of the group's bandwidth (fio's bw_agg)
}

// entries builds the report rows in fio's job order, each in its group
// (stonewall and new_group start one). With group_reporting, a group's
// rows are merged histogram by histogram, never by averaging percentiles;
// with unified_rw_reporting, reads and writes are merged into one
// direction ("mixed").
func entries(res *result) ([]entry, error) {
	grouped := map[uint32]bool{}
	for _, c := range res.clones {
		grouped[c.job.Group] = grouped[c.job.Group] || c.job.GroupReporting
	}
	var out []entry
	for _, c := range res.clones {
		g := c.job.Group
		if !grouped[g] || len(out) == 0 || out[len(out)-1].group != int(g) {
			st := newJobStats()
			st.jobs = 0
			out = append(out, entry{name: c.job.Name, job: c.job, st: st, group: int(g)})
		}
		e := &out[len(out)-1]
		if err := e.st.merge(c.st, grouped[g]); err != nil {
			return nil, fmt.Errorf("group_reporting merge of %s: %w", c.job.Name, err)
		}
		if e.err == nil {
			e.err = c.err
		}
	}
	for i := range out {
		if out[i].job.UnifiedRwReporting {
			if err := out[i].st.unify(); err != nil {
				return nil, err
			}
		}
	}
	shareBandwidth(out)
	return out, nil
}

// shareBandwidth sets each entry's share of its group's bandwidth.
func shareBandwidth(es []entry) {
	for _, g := range groupsOf(es) {
		total := groupTotals(g)
		for _, e := range g {
			for d := range e.st.dir {
				if bw := bandwidth(e.st, d); total[d] > 0 {
					e.bwShare[d] = bw * 100 / total[d]
				}
			}
		}
	}
}

// groupsOf splits entries by group, in order.
func groupsOf(es []entry) [][]*entry {
	var out [][]*entry
	for i := range es {
		if len(out) == 0 || out[len(out)-1][0].group != es[i].group {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], &es[i])
	}
	return out
}

// groupTotals merges every entry into one group total (fio's "Run status
// group" line).
func groupTotals(es []*entry) [nDirs]float64 {
	var t [nDirs]float64
	for _, e := range es {
		for d := range t {
			t[d] += bandwidth(e.st, d)
		}
	}
	return t
}

// bandwidth is bytes per second over the entry's wall runtime.
func bandwidth(st *jobStats, d int) float64 {
	ms := st.wall.Milliseconds()
	if ms == 0 {
		return 0
	}
	return float64(st.dir[d].bytes) * 1000 / float64(ms)
}

// Summary returns the fio-shaped JSON (json+) of the last run, with a
// "writepath" member in each job and at the top that carries what fio's
// JSON rounds or leaves out (every histogram, exact sums, raw depth
// counts, the error text), so that the client can print each worker's
// run and their merge exactly as one fio would (see WriteMerged).
func (w *Workload) Summary(phase string) ([]byte, error) {
	if phase != PhaseRun {
		return nil, fmt.Errorf("fio: unknown phase %q", phase)
	}
	v, err := w.view()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeJSON(&b, jsonTop(v, true, true)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// formats are the spec's output formats in fio's printing order.
func formats(spec *fiov1.Spec) []fiov1.OutputFormat {
	if len(spec.OutputFormats) > 0 {
		return spec.OutputFormats
	}
	if spec.OutputFormat == fiov1.OutputFormat_OUTPUT_FORMAT_UNSPECIFIED {
		return []fiov1.OutputFormat{fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL}
	}
	return []fiov1.OutputFormat{spec.OutputFormat}
}

// Report writes the last run in every output format the spec asks for,
// in fio's order (terse, json, normal).
func (w *Workload) Report(out io.Writer) error {
	v, err := w.view()
	if err != nil {
		return err
	}
	return writeView(out, v)
}

// writeView writes v in every output format its spec asks for.
func writeView(out io.Writer, v *view) error {
	for _, f := range formats(v.spec) {
		var err error
		switch f {
		case fiov1.OutputFormat_OUTPUT_FORMAT_JSON:
			err = writeJSONView(out, v, false)
		case fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS:
			err = writeJSONView(out, v, true)
		case fiov1.OutputFormat_OUTPUT_FORMAT_TERSE:
			err = writeTerseView(out, v)
		default:
			err = writeTextView(out, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
