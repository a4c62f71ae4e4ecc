package fio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// A clone books each completed I/O once, into its Recorder handle for
// the direction: clat (the operation's series, what the fabric's
// intervals carry), lat and, for a queued engine, slat (series local to
// views) under the handle's one lock; with cmdprio, into the handle of
// its priority (fio's per-priority latencies). The run's report takes every
// latency from a handle view of the same Recorder (measure), so fio's
// JSON, normal and terse outputs and the fabric's summary are the same
// values. ramp_time's I/Os are booked nowhere: a clone records from the
// end of its own ramp (clone.tick), which stonewalled jobs reach at
// different times, so no single mark could cut them out of intervals.

// The series of a direction's handle, in RecordSeries order.
const (
	seriesClat = iota
	seriesLat
	seriesSlat
)

// queued reports whether the job's engine submits and completes apart
// (libaio, io_uring, posixaio, submit_offload, null at iodepth > 1), as
// clone.run picks the loop: only those have a submission latency (fio's
// slat).
func queued(j *fiov1.Job) bool {
	switch j.Ioengine {
	case fiov1.IOEngine_IO_ENGINE_LIBAIO, fiov1.IOEngine_IO_ENGINE_IO_URING, fiov1.IOEngine_IO_ENGINE_POSIXAIO:
		return true
	case fiov1.IOEngine_IO_ENGINE_NULL:
		return j.SubmitOffload || j.Iodepth > 1
	}
	return j.SubmitOffload
}

// dirHandle is a clone's handle for one direction's I/Os ("read",
// "write", "trim"): clat, then lat and slat unless the job disables them
// (slat only for a queued engine).
func dirHandle(rec *workload.Recorder, j *fiov1.Job, op string) *workload.Handle {
	var s [workload.MaxSeries]workload.Series
	s[seriesClat] = workload.Series{Name: op}
	if !j.DisableLat {
		s[seriesLat] = workload.Series{Name: op + "_lat", Local: true}
	}
	if !j.DisableSlat && queued(j) {
		s[seriesSlat] = workload.Series{Name: op + "_slat", Local: true}
	}
	return rec.SeriesHandle(s)
}

// attachHandles gives the clone its own Recorder handles, one per
// operation it performs; with cmdprio, one per priority of a direction
// (index 0 the job's own, the direction's handle), so that an I/O is
// still booked once and fio's per-priority latencies are the handles'.
func attachHandles(c *clone, rec *workload.Recorder) {
	if c.does(dirRead) || c.verify != nil {
		c.h[dirRead] = dirHandle(rec, c.job, "read")
		c.bytes[dirRead] = rec.Counter("read_bytes")
	}
	if c.does(dirWrite) {
		c.h[dirWrite] = dirHandle(rec, c.job, "write")
		c.bytes[dirWrite] = rec.Counter("write_bytes")
		if c.job.Fsync > 0 || c.job.Fdatasync > 0 || c.job.EndFsync {
			c.h[opSync] = rec.Handle("sync")
		}
	}
	if c.replay != nil && c.h[opSync] == nil && slices.ContainsFunc(c.job.ReplayOps, func(op uint32) bool { return op >= replayFsync }) {
		c.h[opSync] = rec.Handle("sync") // the log's fsyncs and fdatasyncs
	}
	if c.does(dirTrim) {
		c.h[dirTrim] = dirHandle(rec, c.job, "trim")
		c.bytes[dirTrim] = rec.Counter("trim_bytes")
	}
	if c.prio == nil {
		return
	}
	for d, prios := range c.prio.prios {
		if len(prios) == 0 || c.h[d] == nil {
			continue
		}
		c.prioH[d] = []*workload.Handle{c.h[d]}
		for range prios[1:] {
			c.prioH[d] = append(c.prioH[d], dirHandle(rec, c.job, dirLabel[d]))
		}
	}
}

// complete accounts one finished read or write of want bytes that moved n
// (times in ns since base).
func (c *clone) complete(d int, start, issue, end, n, want int64, off uint64, async bool) {
	if !c.recording {
		return
	}
	if c.logging {
		c.logIO(d, start, issue, end, uint64(n), off, async)
	}
	ds := &c.st.dir[d]
	h := c.h[d]
	if c.prioH[d] != nil {
		h = c.prioH[d][c.prioIdx]
	}
	ds.ios++ // for rate_min; the report counts the Recorder's
	ds.bytes += n
	ds.winBytes += n
	ds.winIOs++
	if n < want {
		ds.short++
	}
	series := seriesSlat // clat and lat
	if async {
		series = workload.MaxSeries
	}
	h.RecordSeries([workload.MaxSeries]int64{end - issue, end - start, issue - start}, series)
	c.bytes[d].Add(n)
	if c.checkLat {
		c.latComplete(d, end-start, off, want)
	}
}

// completeSync accounts one finished fsync/fdatasync.
func (c *clone) completeSync(start, end int64) {
	if c.recording {
		if c.datasync {
			c.st.datasyncIOs++
		} else {
			c.st.syncIOs++
		}
		c.h[opSync].Record(end - start)
	}
}

// measure runs the clones with a handle view of rec open from start, and
// gives each clone its latencies from it once they are done.
func measure(ctx context.Context, clones []*clone, rec *workload.Recorder, log *slog.Logger, start time.Time, status *statusRun) error {
	v := rec.NewHandleView(start)
	defer v.Close()
	runClones(ctx, clones, rec, log)
	status.end() // the dumps stop before the clones' handles go
	// A clone's handles are done: released, they give their last values
	// to the open interval and the view, and their memory back.
	for _, c := range clones {
		for _, h := range c.h {
			if h != nil {
				rec.Release(h)
			}
		}
		for _, hs := range c.prioH {
			for _, h := range hs[min(len(hs), 1):] { // [0] is c.h's
				rec.Release(h)
			}
		}
	}
	cum := v.Mark(time.Now())
	var errs []error
	for _, c := range clones {
		errs = append(errs, c.collect(cum))
	}
	return errors.Join(errs...)
}

// collect fills the clone's latencies and counts of I/Os from the view:
// what the fabric's intervals hold of the clone.
func (c *clone) collect(cum workload.Cumulative) error {
	st := c.st
	st.done = hist.New()
	for d := range st.dir {
		ds, hs := &st.dir[d], c.prioH[d]
		if hs == nil {
			hs = []*workload.Handle{c.h[d]}
		}
		ds.clat, ds.lat, ds.slat = hist.New(), hist.New(), hist.New()
		ds.clatSum, ds.latSum, ds.slatSum = 0, 0, 0
		for i, h := range hs {
			if err := c.collectHandle(cum, h, ds); err != nil {
				return fmt.Errorf("job %s: %s latencies: %w", c.job.Name, dirLabel[d], err)
			}
			if i < len(ds.prio) && h != nil {
				// fio's clat_prio stats hold lat with lat_percentiles, else clat.
				s := seriesClat
				if c.job.LatPercentiles {
					s = seriesLat
				}
				ds.prio[i].h, ds.prio[i].sum = seriesOf(cum, h, s), cum.Series(h, s).Sum
			}
		}
		ds.ios = ds.clat.Count()
		if c.job.DisableClat {
			// Still the fabric's latency; fio's report leaves it out.
			ds.clat, ds.clatSum = hist.New(), 0
		}
		if err := st.done.Merge(ds.clat); err != nil {
			return fmt.Errorf("job %s: %s latencies: %w", c.job.Name, dirLabel[d], err)
		}
	}
	st.syncLat = seriesOf(cum, c.h[opSync], seriesClat)
	return nil
}

// collectHandle adds h's clat, lat and slat (a direction's, or one of
// its priorities') to ds.
func (c *clone) collectHandle(cum workload.Cumulative, h *workload.Handle, ds *dirStats) error {
	if h == nil {
		return nil
	}
	for _, x := range []struct {
		dst *hist.Histogram
		sum *int64
		s   int
	}{{ds.clat, &ds.clatSum, seriesClat}, {ds.lat, &ds.latSum, seriesLat}, {ds.slat, &ds.slatSum, seriesSlat}} {
		if err := x.dst.Merge(cum.SeriesHistogram(h, x.s)); err != nil {
			return err
		}
		*x.sum += cum.Series(h, x.s).Sum
	}
	return nil
}

// seriesOf is h's series i in cum, empty for a direction without a
// handle.
func seriesOf(cum workload.Cumulative, h *workload.Handle, i int) *hist.Histogram {
	if h == nil {
		return hist.New()
	}
	return cum.SeriesHistogram(h, i)
}
