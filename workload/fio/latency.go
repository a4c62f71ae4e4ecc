package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// latTarget is latency_target's queue-depth search as fio 3.33's io_u.c
// runs it (lat_target_init, _check, _success, _failed): the job starts at
// depth 1; every latency_window it looks at the I/Os completed in the
// window, and if latency_percentile percent of them completed (lat, from
// preparing to completion) within the target it raises the depth
// (doubling until a window first fails, then bisecting between the last
// good and the first bad depth), else it lowers it (bisecting down). With
// latency_percentile=100 a single slow I/O lowers it at once. Once a
// window leaves the depth where it was, the job's statistics restart for
// one more window at that depth and the job ends after it (fio's "final
// run"), unless latency_run=1 keeps it searching for the whole run. A
// slow I/O at depth 1 with latency_percentile=100 fails the job as
// max_latency does.
//
// One difference: fio lowers the depth inside the completion of the slow
// I/O and waits there for the queue to drain, so completions in that
// drain lower it again; here the slow completion marks the step down,
// taken once at the top of the job's loop, with the drain's completions
// not counted against the next depth (they were issued at the old one).
type latTarget struct {
	target, window int64 // ns
	pct            float64
	run            bool
	iodepth        int

	qd, low, high, stable int
	endRun, done          bool
	// down: an I/O missed the target with pct=100; stepped down at the
	// next check. quiet: the queue is draining before a new cycle.
	down, quiet bool
	cycleStart  int64
	cycleIOs    uint64
	failed      uint64
	ios         uint64 // I/Os completed while recording
}

func newLatTarget(j *fiov1.Job) *latTarget {
	if j.LatencyTargetNs == 0 {
		return nil
	}
	l := &latTarget{target: int64(j.LatencyTargetNs), window: int64(j.LatencyWindowNs), pct: latPercentile(j),
		run: j.LatencyRun, iodepth: max(int(j.Iodepth), 1)}
	l.qd, l.low, l.high = 1, 1, l.iodepth
	return l
}

// latPercentile is latency_percentile=, fio's default 100.
func latPercentile(j *fiov1.Job) float64 {
	if j.LatencyPercentile == nil {
		return 100
	}
	return *j.LatencyPercentile
}

// latFull reports whether used requests fill the depth the search allows.
func (c *clone) latFull(used int) bool { return c.lat != nil && used >= c.lat.qd }

// latComplete accounts one finished read, write or trim of latency lat
// (ns) against max_latency and latency_target.
func (c *clone) latComplete(d int, lat int64, off uint64, n int64) {
	if d < len(c.job.MaxLatencyNs) && c.job.MaxLatencyNs[d] > 0 && lat > int64(c.job.MaxLatencyNs[d]) {
		c.latFatal(d, lat, int64(c.job.MaxLatencyNs[d]), off, n)
	}
	l := c.lat
	if l == nil || l.quiet {
		return
	}
	l.ios++
	if lat <= l.target || d == dirTrim {
		return
	}
	if l.pct < 100 {
		l.failed++
		return
	}
	if l.qd == 1 {
		c.latFatal(d, lat, l.target, off, n)
		return
	}
	l.down = true
}

// latFatal fails the job as fio's lat_fatal: ETIMEDOUT, its message.
func (c *clone) latFatal(d int, lat, limit int64, off uint64, n int64) {
	if c.fatal == nil {
		msg := fmt.Sprintf("latency of %d nsec exceeds specified max (%d nsec): %s %s %d %d",
			lat, limit, c.path, dirLabel[min(d, dirTrim)], off, n)
		c.fiolog.errorf("fio: %s\n", msg)
		c.fatal = &fioError{errno: unix.ETIMEDOUT, where: whereMaxLat, fn: "max latency exceeded",
			err: fmt.Errorf("job %s: %s: max latency exceeded: %w", c.job.Name, msg, unix.ETIMEDOUT)}
	}
}

// latCheck is fio's lat_target_check, run at the top of the job's loop
// once ramp_time is over: it drains the queue where the search asks (q,
// nil for the synchronous engines) and moves the depth.
func (c *clone) latCheck(q queue, rec *workload.Recorder) error {
	l := c.lat
	if l.down {
		l.down = false
		if err := c.latQuiesce(q); err != nil {
			return err
		}
		l.stepDown()
		l.newCycle(c.now())
		return nil
	}
	now := c.now()
	if now-l.cycleStart < l.window {
		return nil
	}
	ios := l.ios - l.cycleIOs
	drain, restart, cycle := l.decide(ios > 0 && float64(ios-l.failed)/float64(ios)*100 >= l.pct)
	if drain {
		if err := c.latQuiesce(q); err != nil {
			return err
		}
	}
	if restart {
		c.restartStats(rec)
	}
	if cycle {
		l.newCycle(c.now())
	}
	return nil
}

// decide takes a window's outcome (ok: latency_percentile of its I/Os
// met the target; fio's lat_target_check, _success and _failed) and says
// what the job must do: drain the queue, restart its statistics (the
// final window), start a new window. At depth 1 a failed window changes
// nothing, not even the window (fio's __lat_target_failed returns there),
// so the next check weighs the same I/Os and more.
func (l *latTarget) decide(ok bool) (drain, restart, cycle bool) {
	if !ok {
		if l.qd == 1 {
			return false, false, false
		}
		l.stepDown()
		return true, false, true
	}
	prev := l.stepUp()
	if !l.run && l.qd == prev {
		if l.endRun {
			l.done = true
			return false, false, true
		}
		l.endRun = true
		return true, true, true
	}
	return false, false, true
}

func (l *latTarget) newCycle(now int64) {
	l.cycleStart, l.cycleIOs, l.failed = now, l.ios, 0
}

// stepDown is fio's __lat_target_failed past depth 1.
func (l *latTarget) stepDown() {
	if l.qd == 1 {
		return
	}
	l.high = l.qd
	if l.qd == l.low {
		l.low--
	}
	l.qd = (l.qd + l.low) / 2
	l.stable = 0
}

// stepUp is fio's lat_target_success; it returns the depth before.
func (l *latTarget) stepUp() int {
	prev := l.qd
	l.low = l.qd
	if l.qd+1 == l.high {
		// fio: three good windows in a row just under the ceiling raise it
		if l.stable++; l.stable >= 3 {
			l.high++
			l.stable = 0
		}
	}
	if l.high != l.iodepth {
		l.qd = (l.qd + l.high) / 2
	} else {
		l.qd *= 2
	}
	l.qd = min(l.qd, l.iodepth)
	return prev
}

// latQuiesce lets what flies complete (fio's io_u_quiesce); the
// completions are not counted against the new depth.
func (c *clone) latQuiesce(q queue) error {
	if q == nil {
		return nil
	}
	c.lat.quiet = true
	defer func() { c.lat.quiet = false }()
	if err := q.submit(); err != nil {
		return err
	}
	for q.inflight() > 0 {
		if err := q.reap(); err != nil {
			return err
		}
	}
	return nil
}

// restartStats is fio's reset_all_stats and reset_io_stats for the final
// window: the report covers that window alone, and the runtime counts
// again from here (fio resets the job's epoch).
func (c *clone) restartStats(rec *workload.Recorder) {
	now := c.now()
	for _, h := range c.h {
		if h != nil {
			rec.Release(h)
		}
	}
	for _, hs := range c.prioH {
		for _, h := range hs[min(len(hs), 1):] {
			rec.Release(h)
		}
	}
	c.h, c.prioH = [4]*workload.Handle{}, [nDirs][]*workload.Handle{}
	attachHandles(c, rec)
	*c.st = *newCloneStats()
	if c.prio != nil {
		for d := range c.prio.prios {
			c.st.dir[d].prio = prioStats(c.prio.prios[d])
		}
	}
	c.recStart, c.lastSample, c.nextSample = now, now, now+int64(sampleWindow)
	c.usage0 = readThreadUsage()
	if c.job.RuntimeNs > 0 {
		c.endAt = now + c.job.RuntimeNs
	}
}

// latencyDepth is fio's latency_depth: the depth the search ended at, or
// iodepth without a target.
func (c *clone) latencyDepth() int {
	if c.lat == nil {
		return int(c.job.Iodepth)
	}
	return c.lat.qd
}

// setMaxLatency reads max_latency=: a time per direction (R,W,T as bs=),
// bare numbers in microseconds (fio's FIO_OPT_ULL with is_time).
func setMaxLatency(j *fiov1.Job, v string) error {
	parts, set := splitDirs(v)
	if len(j.MaxLatencyNs) < nDirs {
		j.MaxLatencyNs = make([]uint64, nDirs)
	}
	for d := range parts {
		if !set[d] {
			continue
		}
		ns, err := parseTimeIn(parts[d], time.Microsecond)
		if err != nil {
			return err
		}
		j.MaxLatencyNs[d] = uint64(ns)
	}
	return nil
}

// setLatencyPercentile reads latency_percentile=, 0 to 100 (fio's
// FIO_OPT_FLOAT_LIST of one value).
func setLatencyPercentile(j *fiov1.Job, v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err != nil || math.IsNaN(f):
		return fmt.Errorf("not a floating point value: %s", v)
	case f > 100:
		return fmt.Errorf("value out of range: %f (range max: 100.000000)", f)
	case f < 0:
		return fmt.Errorf("value out of range: %f (range min: 0.000000)", f)
	}
	j.LatencyPercentile = &f
	if f == 100 {
		j.LatencyPercentile = nil // fio's default: the spec as without it
	}
	return nil
}

// latDepthOf is the report's latency_depth (fio prints the target in ns,
// the window in µs beside it).
func latDepthOf(e entry) int {
	if e.st.latDepth > 0 {
		return e.st.latDepth
	}
	return int(e.job.Iodepth)
}
