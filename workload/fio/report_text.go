package fio

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

var (
	rwNamesOut     = map[fiov1.ReadWrite]string{}
	engineNamesOut = map[fiov1.IOEngine]string{}
	dirLabel       = [nDirs]string{"read", "write", "trim"}
	dirUpper       = [nDirs]string{" READ", "WRITE", " TRIM"}
)

func init() {
	for k, v := range rwNames {
		if k != "readwrite" {
			rwNamesOut[v] = k
		}
	}
	for k, v := range engineNames {
		engineNamesOut[v] = k
	}
}

// writeTextView writes fio's normal output of one run.
func writeTextView(out io.Writer, v *view) error {
	b := bufio.NewWriter(out)
	switch {
	case !v.status && !v.headed:
		textHeader(b, v)
	case !v.status && v.headedNotes < len(v.notes):
		// Layout lines of jobs laid out after the header went out
		// (stonewall, wait_for): fio prints them as those jobs start.
		for _, n := range v.notes[v.headedNotes:] {
			if isFioNote(n) {
				b.WriteString(n + "\n")
			}
		}
	}
	for _, e := range v.entries {
		textEntry(b, e, v)
	}
	for _, g := range groupsOf(v.entries) {
		textGroup(b, g)
	}
	if !v.status {
		textDisks(b, v.disks)
	}
	return b.Flush()
}

func textHeader(b *bufio.Writer, v *view) {
	for _, j := range v.spec.Jobs {
		r, w, t := resolveBlocks(j.ReadBs, j.Bs), resolveBlocks(j.WriteBs, j.Bs), resolveBlocks(j.TrimBs, j.Bs)
		fmt.Fprintf(b, "%s: (g=%d): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%d\n",
			j.Name, j.Group, rwNamesOut[j.Rw], bsText(r.min), bsText(r.max), bsText(w.min), bsText(w.max),
			bsText(t.min), bsText(t.max), engineNamesOut[j.Ioengine], j.Iodepth)
		if j.Numjobs > 1 {
			b.WriteString("...\n")
		}
	}
	fmt.Fprintf(b, "%s\nStarting %s\n", versionString(v.version), startingText(v.threads, v.procs))
	for _, n := range v.notes {
		// fio prints its layout lines; writepath's own notes on what the
		// layout did (reserved, written, used as is) stay in the summary
		if isFioNote(n) {
			b.WriteString(n + "\n")
		}
	}
	if !v.noBlank {
		b.WriteString("\n")
	}
}

// textVerror is the verror fio's job line shows in parentheses: the
// error's that stopped the job, or, for the first error continue_on_error
// let pass, the one fio's engine set (the synchronous engines' fio_io_end;
// the queueing engines set none, and fio prints "()"). ok is false when
// the line shows none (no error, or one of writepath's own).
func textVerror(e entry) (string, bool) {
	if v := verrorOf(e.err); v != "" {
		return v, true
	}
	if e.err != nil || jobErrno(e) == 0 {
		return "", false
	}
	switch e.job.Ioengine {
	case fiov1.IOEngine_IO_ENGINE_PSYNC, fiov1.IOEngine_IO_ENGINE_SYNC, fiov1.IOEngine_IO_ENGINE_PVSYNC,
		fiov1.IOEngine_IO_ENGINE_PVSYNC2, fiov1.IOEngine_IO_ENGINE_UNSPECIFIED:
		return fmt.Sprintf("file:engines/sync.c:126, func=xfer, error=%s", strerror(jobErrno(e))), true
	}
	return "", true
}

func textEntry(b *bufio.Writer, e entry, v *view) {
	errno := errnoOf(e.err)
	if ve, ok := textVerror(e); ok {
		// fio's show_thread_status with ts->verror; the error said all
		fmt.Fprintf(b, "%s: (groupid=%d, jobs=%d): err=%2d (%s): pid=%d: %s\n", e.name, e.group, e.st.jobs, jobErrno(e),
			ve, v.pid, fioTime(v.start))
	} else {
		fmt.Fprintf(b, "%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s\n", e.name, e.group, e.st.jobs, errno,
			v.pid, fioTime(v.start))
	}
	if e.err != nil && verrorOf(e.err) == "" {
		fmt.Fprintf(b, "  error: %v\n", e.err)
	}
	for d := range e.st.dir {
		if e.st.dir[d].ios > 0 {
			textDir(b, e, d)
		}
	}
	textLatDist(b, e.st.done)
	if e.st.syncLat.Count() > 0 {
		b.WriteString("  fsync/fdatasync/sync_file_range:\n")
		textLat(b, "    sync", e.st.syncLat)
		textPercentiles(b, "    sync", e.st.syncLat, percentilesOf(e.job))
	}
	st := e.st
	fmt.Fprintf(b, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%d, majf=%d, minf=%d\n",
		cpuPct(st.usage.usr, st.runtime), cpuPct(st.usage.sys, st.runtime), st.usage.ctx, st.usage.majf, st.usage.minf)
	fmt.Fprintf(b, "  IO depths    : %s\n", textBuckets(st.level, st.level.sum(), levelLabels))
	fmt.Fprintf(b, "     submit    : %s\n", textBuckets(st.submit, st.submits, batchLabels))
	fmt.Fprintf(b, "     complete  : %s\n", textBuckets(st.complete, st.completes, batchLabels))
	// fio 3.33 prints fdatasyncs as read shorts (see dirJSON).
	fmt.Fprintf(b, "     issued rwts: total=%d,%d,%d,%d short=%d,%d,%d,0 dropped=0,0,0,0\n",
		st.dir[0].ios+st.dir[0].errored, st.dir[1].ios+st.dir[1].errored, st.dir[2].ios+st.dir[2].errored, st.syncIOs, st.dir[0].short+st.datasyncIOs, st.dir[1].short, st.dir[2].short)
	if e.job.ContinueOnError != 0 {
		fmt.Fprintf(b, "     errors    : total=%d, first_error=%d/<%s>\n", st.totalErr, st.firstError, strerror(st.firstError))
	}
	fmt.Fprintf(b, "     latency   : target=%d, window=%d, percentile=%.2f%%, depth=%d\n",
		e.job.LatencyTargetNs, e.job.LatencyWindowNs/1000, latPercentile(e.job), latDepthOf(e))
	if st.late > 0 {
		fmt.Fprintf(b, "     rate_iops : %d I/Os started more than one interval late\n", st.late)
	}
}

// startingText is fio's "Starting 2 threads and 1 process": jobs with
// thread=1 count as threads (writepath runs every job on a thread; the
// words follow the option, as fio's do).
func startingText(threads, procs int) string {
	switch {
	case threads == 0:
		return fmt.Sprintf("%d process%s", procs, plural(procs, "es"))
	case procs == 0:
		return fmt.Sprintf("%d thread%s", threads, plural(threads, "s"))
	}
	return fmt.Sprintf("%d thread%s and %d process%s", threads, plural(threads, "s"), procs, plural(procs, "es"))
}

func textDir(b *bufio.Writer, e entry, d int) {
	ds := e.st.dir[d]
	ms := e.st.wall.Milliseconds()
	bw := uint64(bandwidth(e.st, d))
	iops := uint64(0)
	if ms > 0 {
		iops = uint64(float64(ds.ios) * 1000 / float64(ms))
	}
	label := dirLabel[d]
	if e.job.UnifiedRwReporting {
		label = "mixed"
	}
	fmt.Fprintf(b, "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%dmsec)\n", label, num2str(iops, 4, false, ""),
		num2str(bw, 4, true, "B"), num2str(bw, 4, false, "B"), num2str(uint64(ds.bytes), 4, true, "B"), ms)
	// as fio's calc_lat, a latency without samples prints no line
	for _, l := range []struct {
		label string
		h     *hist.Histogram
	}{{"    slat", ds.slat}, {"    clat", ds.clat}, {"     lat", ds.lat}} {
		if l.h.Count() > 0 {
			textLat(b, l.label, l.h)
		}
	}
	kind := "clat"
	if e.job.LatPercentiles {
		kind = "lat"
	}
	multi := prioSamples(ds.prio) >= 2
	if multi {
		for _, p := range ds.prio {
			if p.h.Count() > 0 {
				textLat(b, fmt.Sprintf("    %s prio %d/%d", kind, p.ioprio>>13, p.ioprio&7), p.h)
			}
		}
	}
	pl := percentilesOf(e.job)
	if e.job.SlatPercentiles && ds.slat.Count() > 0 {
		textPercentiles(b, "    slat", ds.slat, pl)
	}
	if e.job.ClatPercentiles {
		textPercentiles(b, "    clat", ds.clat, pl)
	}
	if e.job.LatPercentiles {
		textPercentiles(b, "     lat", ds.lat, pl)
	}
	if multi && (e.job.ClatPercentiles || e.job.LatPercentiles) {
		total := ds.clat.Count()
		if e.job.LatPercentiles {
			total = ds.lat.Count()
		}
		for _, p := range ds.prio {
			if n := p.h.Count(); n > 0 {
				textPercentiles(b, fmt.Sprintf("    %s prio %d/%d (%.2f%% of IOs)", kind, p.ioprio>>13, p.ioprio&7,
					100*float64(n)/float64(max(total, 1))), p.h, pl)
			}
		}
	}
	if ds.bw.n == 0 {
		return // fio prints no bandwidth or IOPS line without samples
	}
	fmt.Fprintf(b, "   bw (  KiB/s): min=%d, max=%d, per=%.2f%%, avg=%.2f, stdev=%.2f, samples=%d\n",
		int64(ds.bw.min), int64(ds.bw.max), e.bwShare[d], ds.bw.mean, ds.bw.stddev(), ds.bw.n)
	fmt.Fprintf(b, "   iops        : min=%d, max=%d, avg=%.2f, stdev=%.2f, samples=%d\n",
		int64(ds.iops.min), int64(ds.iops.max), ds.iops.mean, ds.iops.stddev(), ds.iops.n)
}

// textLat is fio's "clat (usec): min=.., max=.., avg=.., stdev=.." line,
// in the unit fio's display_lat picks.
func textLat(b *bufio.Writer, label string, h *hist.Histogram) {
	mn, mx, mean, dev := float64(h.Min()), float64(h.Max()), h.Mean(), h.StdDev()
	unit, div := "nsec", 1.0
	switch {
	case mn > 1e6 && mean > 1e6:
		unit, div = "msec", 1e6
	case mn > 1e3 && mean > 1e3:
		unit, div = "usec", 1e3
	}
	fmt.Fprintf(b, "%s (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", label, unit,
		num2str(uint64(mn/div), 6, false, ""), num2str(uint64(mx/div), 6, false, ""), mean/div, dev/div)
}

// textPercentiles is fio's percentile table, four per line, in the unit
// fio's show_clat_percentiles picks (values rounded up).
func textPercentiles(b *bufio.Writer, label string, h *hist.Histogram, list []float64) {
	if h.Count() == 0 {
		return
	}
	vals := fioPercentiles(h, list)
	unit, div := "nsec", int64(1)
	switch {
	case vals[0] > 2_000_000 && vals[len(vals)-1] > 99_999_999:
		unit, div = "msec", 1_000_000
	case vals[0] > 2000 && vals[len(vals)-1] > 99_999:
		unit, div = "usec", 1000
	}
	for i := range vals {
		vals[i] = (vals[i] + div - 1) / div
	}
	width := max(5, len(strconv.FormatInt(vals[len(vals)-1], 10)))
	fmt.Fprintf(b, "%s percentiles (%s):\n     |", label, unit)
	for i, v := range vals {
		sep := ","
		if i == len(vals)-1 {
			sep = "\n"
		} else if i%4 == 3 {
			sep = ",\n     |"
		}
		fmt.Fprintf(b, " %5.2fth=[%*d]%s", list[i], width, v, sep)
	}
}

// textLatDist is fio's "lat (usec)   : 250=0.01%, ..." lines.
func textLatDist(b *bufio.Writer, h *hist.Histogram) {
	if h.Count() == 0 {
		return
	}
	for _, s := range []struct {
		name   string
		unit   float64
		labels []string
	}{{"nsec", 1, nsLabels}, {"usec", 1e3, nsLabels}, {"msec", 1e6, msLabels}} {
		var parts []string
		for _, m := range latBucketsJSON(h, s.unit, s.labels) {
			if p := m.v.(float64); p > 0 {
				parts = append(parts, fmt.Sprintf("%s=%.2f%%", m.k, max(p, 0.01)))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(b, "  lat (%s)   : %s\n", s.name, strings.Join(parts, ", "))
		}
	}
}

func textBuckets(bk depthBuckets, total int64, labels []string) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		v := 0.0
		if total > 0 {
			v = float64(bk[i]) * 100 / float64(total)
		}
		parts[i] = fmt.Sprintf("%s=%.1f%%", l, v)
	}
	return strings.Join(parts, ", ")
}

// textGroup is fio's "Run status group N (all jobs):" block.
func textGroup(b *bufio.Writer, es []*entry) {
	fmt.Fprintf(b, "\nRun status group %d (all jobs):\n", es[0].group)
	for d := range dirLabel {
		var total, bytes int64
		var minBW, maxBW, minMS, maxMS int64 = -1, 0, -1, 0
		for _, e := range es {
			if e.st.dir[d].ios == 0 {
				continue
			}
			bw, ms := int64(bandwidth(e.st, d)), e.st.wall.Milliseconds()
			total += bw
			bytes += e.st.dir[d].bytes
			minBW, maxBW = minPos(minBW, bw), max(maxBW, bw)
			minMS, maxMS = minPos(minMS, ms), max(maxMS, ms)
		}
		if minBW < 0 {
			continue
		}
		fmt.Fprintf(b, "  %s: bw=%s/s (%s/s), %s/s-%s/s (%s/s-%s/s), io=%s (%s), run=%d-%dmsec\n", dirUpper[d],
			n2p(total), n2s(total), n2p(minBW), n2p(maxBW), n2s(minBW), n2s(maxBW), n2p(bytes), n2s(bytes), minMS, maxMS)
	}
}

func textDisks(b *bufio.Writer, ds []diskUtil) {
	if len(ds) == 0 {
		return
	}
	b.WriteString("\nDisk stats (read/write):\n")
	for _, d := range ds {
		fmt.Fprintf(b, "  %s: ios=%d/%d, merge=%d/%d, ticks=%d/%d, in_queue=%d, util=%.2f%%\n", d.name,
			d.d.readIOs, d.d.writeIOs, d.d.readMerges, d.d.writeMerges, d.d.readTicks, d.d.writeTicks, d.d.inQueue, d.util)
	}
}

func n2p(v int64) string { return num2str(uint64(v), 4, true, "B") }
func n2s(v int64) string { return num2str(uint64(v), 4, false, "B") }

func minPos(a, b int64) int64 {
	if a < 0 || b < a {
		return b
	}
	return a
}

// bsText is a block size as fio's header shows it ("4096B", "64.0KiB").
func bsText(n uint64) string { return num2str(n, 4, true, "B") }

func plural(n int, s string) string {
	if n == 1 {
		return ""
	}
	return s
}

// isFioNote reports whether a layout note is one fio prints.
func isFioNote(n string) bool { return strings.Contains(n, ": Laying out IO file") }
