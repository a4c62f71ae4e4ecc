package fio

import (
	"os"
	"time"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// view is one fio run as the report writers print it: from this
// process's last run, or decoded from a worker's summary (see
// decodeSummary), so that a run over the fabric prints what each worker's
// fio would have printed and their merge.
type view struct {
	version string
	start   time.Time
	elapsed time.Duration
	spec    *fiov1.Spec
	// threads and procs are the clones started with and without thread=1
	// (fio's "Starting 2 threads and 1 process").
	threads, procs int
	pid            int
	notes          []string
	entries        []entry
	disks          []diskUtil
	// host names the worker in fio's client/server output ("hostname",
	// "<host> " before each normal line); empty for a local run.
	host string
	// status: a --status-interval dump, in normal output the jobs' and
	// groups' lines only (fio prints the header once, before the jobs
	// start, and disk stats at the end).
	status bool
	// headed: the normal output's header went out before the jobs ran
	// (as fio prints it first), with the first headedNotes of notes.
	headed      bool
	headedNotes int
	// noBlank: the header ends without its blank line (the ETA line that
	// follows ends with it).
	noBlank bool
}

// view is the last run's report rows.
func (w *Workload) view() (*view, error) {
	res, err := w.last()
	if err != nil {
		return nil, err
	}
	es, err := entries(res)
	if err != nil {
		return nil, err
	}
	v := &view{version: res.version, start: res.start, elapsed: res.elapsed, spec: w.spec,
		pid: os.Getpid(), notes: res.notes, entries: es, disks: res.disks, headed: res.headed >= 0, headedNotes: max(res.headed, 0)}
	for _, c := range res.clones {
		if c.job.Thread {
			v.threads++
		} else {
			v.procs++
		}
	}
	return v, nil
}

// terseVersion is the spec's --terse-version, fio's default 3.
func (v *view) terseVersion() int {
	if v.spec.TerseVersion == 0 {
		return 3
	}
	return int(v.spec.TerseVersion)
}
