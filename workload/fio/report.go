package fio

import (
	"bytes"
	"fmt"
	"io"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Version is what reports give as "fio version": writepath's engine,
// speaking fio 3.33's formats.
const Version = "writepath-fio-3.33"

// entry is one reported job: a clone, or with group_reporting the merge of
// every clone of the group.
type entry struct {
	name    string
	group   int
	job     *fiov1.Job // the first clone's job: its options are shown
	st      *jobStats
	err     error
	bwShare [2]float64 // percent of the group's bandwidth (fio's bw_agg)
}

// entries builds the report rows. All jobs are in group 0 (stonewall is not
// supported). With group_reporting, rows are merged histogram by histogram,
// never by averaging percentiles.
func entries(res *result) ([]entry, error) {
	var out []entry
	grouped := false
	for _, c := range res.clones {
		grouped = grouped || c.job.GroupReporting
	}
	for _, c := range res.clones {
		if !grouped || len(out) == 0 {
			st := newJobStats()
			st.jobs = 0
			out = append(out, entry{name: c.job.Name, job: c.job, st: st})
		}
		e := &out[len(out)-1]
		if err := e.st.merge(c.st, grouped); err != nil {
			return nil, fmt.Errorf("group_reporting merge of %s: %w", c.job.Name, err)
		}
		if e.err == nil {
			e.err = c.err
		}
	}
	total := groupTotals(out)
	for i := range out {
		for d := range out[i].st.dir {
			if bw := bandwidth(out[i].st, d); total[d] > 0 {
				out[i].bwShare[d] = bw * 100 / total[d]
			}
		}
	}
	return out, nil
}

// groupTotals merges every entry into one group total (fio's "Run status
// group" line).
func groupTotals(es []entry) [2]float64 {
	var t [2]float64
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

// Summary returns the fio-shaped JSON of the last run (json+ when the spec
// asked for it), for the fabric to ship with the phase result.
func (w *Workload) Summary(phase string) ([]byte, error) {
	if phase != PhaseRun {
		return nil, fmt.Errorf("fio: unknown phase %q", phase)
	}
	var b bytes.Buffer
	plus := w.spec.OutputFormat == fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS
	if err := w.writeJSON(&b, plus); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Report writes the last run in the spec's output format.
func (w *Workload) Report(out io.Writer) error {
	switch w.spec.OutputFormat {
	case fiov1.OutputFormat_OUTPUT_FORMAT_JSON:
		return w.writeJSON(out, false)
	case fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS:
		return w.writeJSON(out, true)
	}
	return w.writeText(out)
}
