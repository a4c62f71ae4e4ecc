package fio

import (
	"math"
	"time"

	"github.com/writepath/writepath/hist"
)

// sampleWindow is fio's bw_avg_time / iops_avg_time default: bandwidth and
// IOPS are sampled every 500 ms.
const sampleWindow = 500 * time.Millisecond

// dirStats are one direction's cumulative results. Latencies are ns.
type dirStats struct {
	// clat, lat and slat are the Recorder's (a clone's handle view, see
	// collect): nil while a clone runs, which books them in its handle.
	clat, lat, slat *hist.Histogram
	// sums of clat, lat and slat in ns: exact means, so that mean(slat) +
	// mean(clat) = mean(lat) as in fio (histogram means are approximate).
	clatSum, latSum, slatSum int64
	// ios counts the I/Os: while a clone runs for rate_min, then the
	// Recorder's count (collect).
	ios, bytes int64
	short      int64
	errored    int64   // I/Os that failed (issued: in fio's total_ios)
	bw, iops   samples // per-window KiB/s and IOPS
	winBytes   int64   // bytes in the current sample window
	winIOs     int64
	// prio are the per-priority latencies with cmdprio options (index 0
	// the job's own priority); nil without.
	prio []prioStat
}

func newDirStats() dirStats {
	return dirStats{clat: hist.New(), lat: hist.New(), slat: hist.New()}
}

// samples accumulates min/max/mean/stddev of window samples, as fio's
// bw_min..bw_dev and iops_min..iops_stddev (Welford's running mean and
// sum of squared deviations m2).
type samples struct {
	n        int64
	min, max float64
	mean, m2 float64
}

func (s *samples) add(v float64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	s.n++
	d := v - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (v - s.mean)
}

// merge pools o's samples into s (Chan et al.'s parallel update): the
// distribution of every job's samples.
func (s *samples) merge(o samples) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = o
		return
	}
	n := s.n + o.n
	d := o.mean - s.mean
	s.m2 += o.m2 + d*d*float64(s.n)*float64(o.n)/float64(n)
	s.mean += d * float64(o.n) / float64(n)
	s.min, s.max, s.n = min(s.min, o.min), max(s.max, o.max), n
}

// sum adds o as a concurrent stream, as fio's group_reporting does for
// bandwidth and IOPS ("pure sum"): the group's rate is the jobs' rates
// added, so min, max and mean add, and so do the variances.
func (s *samples) sum(o samples) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = o
		return
	}
	vs, vo := s.variance(), o.variance()
	s.min += o.min
	s.max += o.max
	s.mean += o.mean
	s.n += o.n // fio reports the jobs' sample counts added
	s.m2 = (vs + vo) * float64(s.n-1)
}

func (s samples) variance() float64 {
	if s.n < 2 {
		return 0
	}
	return s.m2 / float64(s.n-1)
}

// stddev is the sample standard deviation (n-1), as fio computes it.
func (s samples) stddev() float64 { return math.Sqrt(math.Max(0, s.variance())) }

// depthBuckets are fio's IO depth report buckets: 1, 2, 4, 8, 16, 32, >=64
// for levels; 0, 4, 8, 16, 32, 64, >=64 for submit/complete batch sizes.
type depthBuckets [7]int64

// sum is the buckets' total: for levels, the requests submitted (fio
// divides its io_u_map by them, not by the io_submit calls, which differ
// once a call submits several).
func (b *depthBuckets) sum() (t int64) {
	for _, n := range b {
		t += n
	}
	return t
}

// levelIndex maps a queue depth to fio's io_u_map bucket.
func levelIndex(depth int) int {
	switch {
	case depth >= 64:
		return 6
	case depth >= 32:
		return 5
	case depth >= 16:
		return 4
	case depth >= 8:
		return 3
	case depth >= 4:
		return 2
	case depth >= 2:
		return 1
	}
	return 0
}

// batchIndex maps a submit/complete batch size to fio's io_u_submit bucket.
func batchIndex(n int) int {
	switch {
	case n <= 0:
		return 0
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	case n <= 16:
		return 3
	case n <= 32:
		return 4
	case n <= 64:
		return 5
	}
	return 6
}

// jobStats are one job clone's (or, merged, one group's) results.
type jobStats struct {
	dir [nDirs]dirStats
	// syncLat is the fsyncs' latency and done every read, write and trim
	// by its clat (fio's io_u_lat: the latency_* distribution); like the
	// directions' latencies, nil in a running clone.
	syncLat, done           *hist.Histogram
	syncIOs                 int64         // fsyncs (fio's total_io_u[DDIR_SYNC])
	datasyncIOs             int64         // fdatasyncs, counted apart as in fio
	runtime                 time.Duration // summed over merged clones
	wall                    time.Duration // longest clone runtime
	usage                   threadUsage
	level, submit, complete depthBuckets
	submits, completes      int64
	late                    int64 // rate_iops: I/Os started late
	latDepth                int   // latency_depth: where latency_target's search ended (0: iodepth)
	totalErr                int64 // continue_on_error: errors let pass (fio's total_err)
	firstError              int   // and the first one's errno
	jobs                    int   // clones merged in
}

func newJobStats() *jobStats {
	return &jobStats{dir: [nDirs]dirStats{newDirStats(), newDirStats(), newDirStats()}, syncLat: hist.New(), done: hist.New(), jobs: 1}
}

// newCloneStats are a clone's, whose latencies its Recorder handles hold
// until the run ends (collect).
func newCloneStats() *jobStats { return &jobStats{jobs: 1} }

// merge adds o into s by merging histograms (exact), summing counts and
// runtimes, as fio's group_reporting sums its per-job stats.
//
// With group set, bandwidth and IOPS samples add up as concurrent streams
// (fio's group_reporting); otherwise they pool.
func (s *jobStats) merge(o *jobStats, group bool) error {
	for d := range s.dir {
		a, b := &s.dir[d], &o.dir[d]
		for _, p := range [][2]*hist.Histogram{{a.clat, b.clat}, {a.lat, b.lat}, {a.slat, b.slat}} {
			if err := p[0].Merge(p[1]); err != nil {
				return err
			}
		}
		var err error
		if a.prio, err = mergePrios(a.prio, b.prio); err != nil {
			return err
		}
		a.ios += b.ios
		a.bytes += b.bytes
		a.short += b.short
		a.errored += b.errored
		a.clatSum += b.clatSum
		a.latSum += b.latSum
		a.slatSum += b.slatSum
		if group {
			a.bw.sum(b.bw)
			a.iops.sum(b.iops)
		} else {
			a.bw.merge(b.bw)
			a.iops.merge(b.iops)
		}
	}
	for _, p := range [][2]*hist.Histogram{{s.syncLat, o.syncLat}, {s.done, o.done}} {
		if err := p[0].Merge(p[1]); err != nil {
			return err
		}
	}
	s.syncIOs += o.syncIOs
	s.datasyncIOs += o.datasyncIOs
	s.runtime += o.runtime
	s.wall = max(s.wall, o.wall)
	s.totalErr += o.totalErr
	s.firstError = o.firstError // fio's group takes its last job's
	if o.latDepth > 0 {
		s.latDepth = o.latDepth // fio's group takes its last job's
	}
	s.usage = s.usage.add(o.usage)
	for i := range s.level {
		s.level[i] += o.level[i]
		s.submit[i] += o.submit[i]
		s.complete[i] += o.complete[i]
	}
	s.submits += o.submits
	s.completes += o.completes
	s.late += o.late
	s.jobs += o.jobs
	return nil
}

// unify merges the write and trim directions into the read one (fio's
// unified_rw_reporting=mixed), leaving them empty.
func (s *jobStats) unify() error {
	r := &s.dir[dirRead]
	for _, d := range []int{dirWrite, dirTrim} {
		w := &s.dir[d]
		for _, p := range [][2]*hist.Histogram{{r.clat, w.clat}, {r.lat, w.lat}, {r.slat, w.slat}} {
			if err := p[0].Merge(p[1]); err != nil {
				return err
			}
		}
		var err error
		if r.prio, err = mergePrios(r.prio, w.prio); err != nil {
			return err
		}
		r.ios += w.ios
		r.bytes += w.bytes
		r.clatSum += w.clatSum
		r.latSum += w.latSum
		r.slatSum += w.slatSum
		r.short += w.short
		r.bw.sum(w.bw)
		r.iops.sum(w.iops)
		s.dir[d] = newDirStats()
	}
	return nil
}

// exactMean is sum/h.Count() when a sum was kept, else the histogram's
// mean (summaries decoded from JSON).
func exactMean(h *hist.Histogram, sum int64) float64 {
	if n := h.Count(); n > 0 && sum > 0 {
		return float64(sum) / float64(n)
	}
	return h.Mean()
}
