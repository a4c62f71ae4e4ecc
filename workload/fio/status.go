package fio

import (
	"bufio"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// fio's --status-interval=T: every T while the jobs run, the full report
// of the run so far (each job's block and the group lines in normal
// output, a whole JSON document in json) goes to the output, as fio's
// __show_running_run_stats prints it; the final report follows as ever.
//
// Nothing is added to the per-I/O path: a running clone copies its
// counts when asked, at its 5 ms yield (tick), and the latencies come from
// a handle view of the Recorder the dumps mark and add up.

// statusDump is what SetStatus asked for.
type statusDump struct {
	every time.Duration
	out   io.Writer
}

// SetHeader makes later runs write the normal output's header (the jobs'
// lines, "Starting N processes", the layout's) to out as the jobs start,
// as fio does, instead of with the report; nil turns it off.
// etaFollows says the ETA line follows the header (and ends with the
// blank line the header would end with).
func (w *Workload) SetHeader(out io.Writer, etaFollows bool) {
	w.header, w.etaFollows = out, etaFollows
}

// headerOut is where the header goes before the jobs run, or nil.
func (w *Workload) headerOut() io.Writer {
	if w == nil || !wantsText(w.spec) {
		return nil
	}
	if w.status != nil {
		return w.status.out
	}
	return w.header
}

// writeHeader writes the normal output's header of clones, with notes.
func writeHeader(out io.Writer, w *Workload, clones []*clone, version string, notes []string) {
	v := &view{version: version, spec: w.spec, notes: notes, noBlank: w.etaFollows}
	for _, c := range clones {
		if c.job.Thread {
			v.threads++
		} else {
			v.procs++
		}
	}
	b := bufio.NewWriter(out)
	textHeader(b, v)
	_ = b.Flush()
}

// SetStatus makes later runs write the report so far to out every d
// (fio's --status-interval); d = 0 turns it off.
func (w *Workload) SetStatus(d time.Duration, out io.Writer) {
	w.status = nil
	if d > 0 {
		w.status = &statusDump{every: d, out: out}
	}
}

// cloneStatus is a clone's side of the dumps.
type cloneStatus struct {
	want    atomic.Bool
	mu      sync.Mutex
	st      jobStats            // the clone's counts when last asked
	runtime time.Duration       // its runtime then
	h       [4]*workload.Handle // its handles (attached in its own thread)
	got     chan struct{}       // signalled after each copy
}

// publish copies the clone's counts for a dump (the clone's own thread).
func (c *clone) publish(now int64) {
	s := c.status
	s.mu.Lock()
	s.st = *c.st
	for d := range s.st.dir {
		s.st.dir[d].prio = nil // per-priority latencies stay out of dumps
	}
	s.runtime, s.h = 0, c.h
	if c.recording {
		s.runtime = time.Duration(now - c.recStart)
	}
	s.mu.Unlock()
	s.want.Store(false)
	select {
	case s.got <- struct{}{}:
	default:
	}
}

// statusRun writes the dumps while the clones run.
type statusRun struct {
	dump   *statusDump
	w      *Workload
	clones []*clone
	view   *workload.View
	start  time.Time
	// acc are each clone's latencies so far, by direction (opSync for
	// fsyncs) and series, added up from the view's marks.
	acc  [][nDirs + 1][3]*hist.Histogram
	sums [][nDirs + 1][3]int64
	stop chan struct{}
	done chan struct{}
}

func startStatus(d *statusDump, w *Workload, clones []*clone, rec *workload.Recorder, start time.Time, version string, notes []string) *statusRun {
	s := &statusRun{dump: d, w: w, clones: clones, view: rec.NewHandleView(start), start: start,
		acc: make([][nDirs + 1][3]*hist.Histogram, len(clones)), sums: make([][nDirs + 1][3]int64, len(clones)),
		stop: make(chan struct{}), done: make(chan struct{})}
	for i, c := range clones {
		c.status = &cloneStatus{got: make(chan struct{}, 1)}
		c.done = make(chan struct{}) // runClones closes it when the clone ends
		for k := range s.acc[i] {
			for j := range s.acc[i][k] {
				s.acc[i][k][j] = hist.New()
			}
		}
	}
	go s.loop()
	return s
}

// wantsText reports whether the spec's output formats include normal.
func wantsText(spec *fiov1.Spec) bool {
	for _, f := range formats(spec) {
		if f == fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL || f == fiov1.OutputFormat_OUTPUT_FORMAT_UNSPECIFIED {
			return true
		}
	}
	return false
}

// end stops the dumps before the clones' final counts are collected.
func (s *statusRun) end() {
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.view.Close()
	for _, c := range s.clones {
		c.status = nil
	}
}

func (s *statusRun) loop() {
	defer close(s.done)
	t := time.NewTicker(s.dump.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.write()
		}
	}
}

// write asks the running clones for their counts (waiting a little for
// each: one blocked in a long I/O or sleep gives its previous copy),
// marks the view and writes the report so far.
func (s *statusRun) write() {
	for _, c := range s.clones {
		c.status.want.Store(true)
	}
	wait := time.NewTimer(50 * time.Millisecond)
	defer wait.Stop()
	for _, c := range s.clones {
		select {
		case <-c.done:
		case <-c.status.got:
		case <-wait.C:
		case <-s.stop:
			return
		}
	}
	now := time.Now()
	cum := s.view.Mark(now)
	fakes := make([]*clone, len(s.clones))
	for i, c := range s.clones {
		var st jobStats
		var rt time.Duration
		var hs [4]*workload.Handle
		select {
		case <-c.done: // finished: its counts are final (collect comes later)
			st, rt, hs = *c.st, c.st.runtime, c.h
		default:
			c.status.mu.Lock()
			st, rt, hs = c.status.st, c.status.runtime, c.status.h
			c.status.mu.Unlock()
		}
		st.runtime, st.wall = rt, rt
		st.done = hist.New()
		for d := 0; d <= nDirs; d++ {
			h := hs[d] // d == nDirs: opSync, the fsyncs
			for j, series := range []int{seriesClat, seriesLat, seriesSlat} {
				if h != nil {
					_ = s.acc[i][d][j].Merge(cum.SeriesHistogram(h, series))
					s.sums[i][d][j] += cum.Series(h, series).Sum
				}
			}
			if d == nDirs {
				st.syncLat = s.acc[i][d][0].Clone()
				continue
			}
			ds := &st.dir[d]
			ds.clat, ds.lat, ds.slat = s.acc[i][d][0].Clone(), s.acc[i][d][1].Clone(), s.acc[i][d][2].Clone()
			ds.clatSum, ds.latSum, ds.slatSum = s.sums[i][d][0], s.sums[i][d][1], s.sums[i][d][2]
			ds.ios = ds.clat.Count()
			if c.job.DisableClat {
				ds.clat, ds.clatSum = hist.New(), 0
			}
			_ = st.done.Merge(ds.clat)
		}
		fakes[i] = &clone{job: c.job, st: &st}
	}
	es, err := entries(&result{clones: fakes})
	if err != nil {
		return
	}
	v := &view{start: s.start, elapsed: now.Sub(s.start), spec: s.w.spec, pid: os.Getpid(), entries: es, status: true}
	_ = writeView(s.dump.out, v)
}
