package fio

import (
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"strconv"

	"github.com/writepath/writepath/beneath"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Log kinds, in the order of a clone's logs array.
const (
	logLat = iota
	logClat
	logSlat
	logBW
	logIOPS
	logKinds
)

var logSuffix = [logKinds]string{"lat", "clat", "slat", "bw", "iops"}

// lineLog is one fio log file being written: lines are appended to a
// fixed buffer and written out whole, so that clones sharing a file
// (per_job_logs=0) never interleave inside a line, and nothing is
// allocated per line.
type lineLog struct {
	f      *os.File
	buf    []byte
	line   []byte
	offset bool // log_offset: an offset column
	// prioHex (log_prio): the last column is the I/O's priority value,
	// else 1 for a real-time one and 0 otherwise, as fio prints them.
	prioHex bool
	prio    uint16 // priority of the sample being logged
	// avg_msec windows, per direction: sum, max and count of values
	// (lat logs), or bytes and I/Os (bw/iops logs), since last.
	avg        uint64
	maxValue   bool
	last       [nDirs]uint64
	sum, maxV  [nDirs]uint64
	n, winByte [nDirs]uint64
	// zw (log_store_compressed=1): samples are fio's binary io_sample
	// records, and each chunk of them is one zlib stream in the .fz file,
	// as fio stores them (and fio --inflate-log reads them back).
	zw *zlib.Writer
}

// clatHist is fio's clat histogram log (write_hist_log): fio's own
// 1856-bin plat buckets, dumped as deltas every log_hist_msec.
type clatHist struct {
	f          *os.File
	buf        []byte
	every      uint64 // ms
	coarseness uint
	// started and next: each direction's window, as fio keeps one per
	// direction from its first sample (stat.c's hist_window).
	started   [nDirs]bool
	next      [nDirs]uint64
	cur, prev [nDirs][platNR]uint64
}

// fio's FIO_IO_U_PLAT_BITS, _VAL and _NR (stat.h).
const (
	platBits = 6
	platVal  = 1 << platBits
	platNR   = 29 * platVal
)

// platIndex is fio's plat_val_to_idx: the bucket of a latency in ns.
func platIndex(v uint64) int {
	msb := 0
	if v != 0 {
		msb = 63 - bits.LeadingZeros64(v)
	}
	if msb <= platBits {
		return int(v)
	}
	errBits := uint(msb - platBits)
	base := (int(errBits) + 1) << platBits
	off := int((platVal - 1) & (v >> errBits))
	return min(base+off, platNR-1)
}

// logFileName is fio's log file name: prefix_kind.N.log with per_job_logs (N
// is the clone's 1-based job number), else prefix_kind.log.
func logFileName(prefix, kind string, perJob bool, n int) string {
	if perJob {
		return fmt.Sprintf("%s_%s.%d.log", prefix, kind, n)
	}
	return fmt.Sprintf("%s_%s.log", prefix, kind)
}

// openLogs opens the clone's log files (paths through path: relative to
// the data dir, checked by the worker's guard) as its job asks; files
// shared by clones (per_job_logs=0) are opened in append mode and
// truncated by the first clone only.
func openLogs(c *clone, path func(string) (beneath.Path, error), first bool) error {
	l := c.job.GetLogs()
	if l == nil {
		return nil
	}
	prefixes := [logKinds]string{l.Lat, l.Lat, l.Lat, l.Bw, l.Iops}
	for k, p := range prefixes {
		if p == "" {
			continue
		}
		name := logFileName(p, logSuffix[k], l.PerJob, c.index+1)
		if l.StoreCompressed {
			name += ".fz"
		}
		f, err := openLog(path, name, first || l.PerJob)
		if err != nil {
			return fmt.Errorf("job %s: %w", c.job.Name, err)
		}
		// log_compression without log_store_compressed only saves fio
		// memory: lines here go out as each 64 KiB buffer fills, so the
		// file is the same either way.
		ll := &lineLog{f: f, buf: make([]byte, 0, 64<<10), line: make([]byte, 0, 128),
			offset: l.Offset, avg: l.AvgMsec, maxValue: l.MaxValue, prioHex: c.job.LogPrio}
		if l.StoreCompressed {
			ll.zw = zlib.NewWriter(f)
			ll.buf = make([]byte, 0, gzChunk(l.Compression, ll.offset))
		}
		c.logs[k] = ll
	}
	if l.Hist != "" {
		f, err := openLog(path, logFileName(l.Hist, "clat_hist", l.PerJob, c.index+1), first || l.PerJob)
		if err != nil {
			return fmt.Errorf("job %s: %w", c.job.Name, err)
		}
		every := l.HistMsec
		if every == 0 {
			every = l.AvgMsec
		}
		c.hist = &clatHist{f: f, buf: make([]byte, 0, 256<<10), every: every, coarseness: uint(l.HistCoarseness)}
	}
	return nil
}

// openLog opens a log where the worker's guard resolved it (through the
// returned Path: the file checked is the file written).
func openLog(path func(string) (beneath.Path, error), name string, truncate bool) (*os.File, error) {
	p, err := path(name)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if truncate {
		flags |= os.O_TRUNC
	}
	f, err := p.OpenFile(flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", p, err)
	}
	return f, nil
}

// sample logs one value: at once without log_avg_msec, else into the
// direction's window, written when the window has passed (fio's
// add_log_sample: "time, value, ddir, bs, [offset, ]prio").
func (l *lineLog) sample(ms uint64, v uint64, d int, bs, off uint64) {
	if l.avg == 0 {
		l.write(ms, v, d, bs, off)
		return
	}
	l.sum[d] += v
	l.maxV[d] = max(l.maxV[d], v)
	l.n[d]++
	if ms-l.last[d] < l.avg {
		return
	}
	out := l.sum[d] / l.n[d]
	if l.maxValue {
		out = l.maxV[d]
	}
	l.prio = 0 // an averaged value has no one priority
	l.write(ms, out, d, 0, 0)
	l.sum[d], l.maxV[d], l.n[d] = 0, 0, 0
	l.last[d] = ms - ms%l.avg
}

// rate logs bw (KiB/s) or iops over log_avg_msec windows, as fio's
// __add_samples does for averaged bw/iops logs.
func (l *lineLog) rate(ms uint64, bytes uint64, d int, bw bool) {
	l.winByte[d] += bytes
	l.n[d]++
	span := ms - l.last[d]
	if span < l.avg {
		return
	}
	v := l.n[d] * 1000 / max(span, 1)
	if bw {
		v = l.winByte[d] * 1000 / max(span, 1) / 1024
	}
	l.prio = 0
	l.write(ms, v, d, 0, 0)
	l.winByte[d], l.n[d] = 0, 0
	l.last[d] = ms - ms%l.avg
}

func (l *lineLog) write(ms, v uint64, d int, bs, off uint64) {
	if l.zw != nil {
		l.writeSample(ms, v, d, bs, off)
		return
	}
	b := l.line[:0]
	b = strconv.AppendUint(b, ms, 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, v, 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(d), 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, bs, 10)
	if l.offset {
		b = append(b, ", "...)
		b = strconv.AppendUint(b, off, 10)
	}
	switch {
	case l.prioHex:
		b = append(b, ", 0x"...)
		for shift := 12; shift >= 0; shift -= 4 {
			b = append(b, "0123456789abcdef"[(l.prio>>shift)&0xf])
		}
		b = append(b, '\n')
	case l.prio>>13 == ioprioClassRT:
		b = append(b, ", 1\n"...)
	default:
		b = append(b, ", 0\n"...)
	}
	l.line = b
	if len(l.buf)+len(b) > cap(l.buf) {
		l.flush()
	}
	l.buf = append(l.buf, b...)
}

// fio's io_sample layout on 64-bit Linux (iolog.h): time, value, ddir
// with the offset and priority flag bits, priority, 2 bytes of padding,
// block size, then with log_offset the offset.
const (
	sampleLen       = 32
	sampleOffsetLen = 40
	sampleOffsetBit = 0x80000000 // LOG_OFFSET_SAMPLE_BIT
	samplePrioBit   = 0x40000000 // LOG_PRIO_SAMPLE_BIT
)

// gzChunk is the buffer of samples behind each compressed stream:
// log_compression= bytes (fio's log_gz) in whole samples; without it, 1
// MiB (fio compresses what it holds when the job ends).
func gzChunk(n uint64, offset bool) int {
	rec := uint64(sampleLen)
	if offset {
		rec = sampleOffsetLen
	}
	if n == 0 {
		n = 1 << 20
	}
	return int(max(n/rec, 1) * rec)
}

// writeSample appends one binary sample, compressing the chunk when it
// is full.
func (l *lineLog) writeSample(ms, v uint64, d int, bs, off uint64) {
	n := sampleLen
	ddir := uint32(d)
	if l.offset {
		n, ddir = sampleOffsetLen, ddir|sampleOffsetBit
	}
	if l.prioHex {
		ddir |= samplePrioBit
	}
	if len(l.buf)+n > cap(l.buf) {
		l.flush()
	}
	b := l.buf[len(l.buf) : len(l.buf)+n]
	binary.LittleEndian.PutUint64(b[0:], ms)
	binary.LittleEndian.PutUint64(b[8:], v)
	binary.LittleEndian.PutUint32(b[16:], ddir)
	binary.LittleEndian.PutUint16(b[20:], l.prio)
	binary.LittleEndian.PutUint16(b[22:], 0)
	binary.LittleEndian.PutUint64(b[24:], bs)
	if l.offset {
		binary.LittleEndian.PutUint64(b[32:], off)
	}
	l.buf = l.buf[:len(l.buf)+n]
}

// flush writes the whole lines buffered, or the samples as one zlib
// stream (errors surface at close).
func (l *lineLog) flush() {
	if l.zw != nil && len(l.buf) > 0 {
		l.zw.Reset(l.f)
		_, _ = l.zw.Write(l.buf)
		_ = l.zw.Close() // ends the stream; the file stays open
		l.buf = l.buf[:0]
		return
	}
	if len(l.buf) > 0 {
		_, _ = l.f.Write(l.buf)
		l.buf = l.buf[:0]
	}
}

func (l *lineLog) close() error {
	l.flush()
	return l.f.Close()
}

// record adds one clat to the histogram log and dumps its direction's
// deltas when log_hist_msec has passed since that direction's last dump
// ("time, ddir, bs, bin..."), as fio 3.33 does: a direction with no I/O
// has no rows (they were all zeros), and a window starts at its
// direction's first sample.
func (h *clatHist) record(ms uint64, clat int64, d int, bs uint64) {
	h.cur[d][platIndex(uint64(max(clat, 0)))]++
	if !h.started[d] {
		h.started[d], h.next[d] = true, ms+h.every
		return
	}
	if ms < h.next[d] {
		return
	}
	h.dump(ms, d, bs)
	h.next[d] = ms + h.every
}

func (h *clatHist) dump(ms uint64, d int, bs uint64) {
	b := h.buf[:0]
	b = strconv.AppendUint(b, ms, 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(d), 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, bs, 10)
	step := 1 << h.coarseness
	for i := 0; i < platNR; i += step {
		sum := uint64(0)
		for k := i; k < i+step && k < platNR; k++ {
			sum += h.cur[d][k] - h.prev[d][k]
		}
		b = append(b, ", "...)
		b = strconv.AppendUint(b, sum, 10)
	}
	b = append(b, '\n')
	h.prev[d] = h.cur[d]
	_, _ = h.f.Write(b)
	h.buf = b[:0]
}

// close ends the log. The last, partial window is left out, as fio
// leaves it (fio-histo-log-pctiles showed it as a row of no samples).
func (h *clatHist) close() error {
	return h.f.Close()
}

// logIO logs one completed read or write (times ns since base).
func (c *clone) logIO(d int, start, issue, end int64, n, off uint64, async bool) {
	ms := uint64(end / 1e6)
	prio := uint16(0)
	if c.prio != nil && c.prioIdx > 0 && d < len(c.prio.prios) {
		prio = c.prio.prios[d][c.prioIdx]
	}
	for _, l := range c.logs {
		if l != nil {
			l.prio = prio
		}
	}
	if l := c.logs[logLat]; l != nil {
		l.sample(ms, uint64(end-start), d, n, off)
		c.logs[logClat].sample(ms, uint64(end-issue), d, n, off)
		if async {
			c.logs[logSlat].sample(ms, uint64(issue-start), d, n, off)
		}
	}
	if l := c.logs[logBW]; l != nil {
		if l.avg > 0 {
			l.rate(ms, n, d, true)
		} else if clat := end - issue; clat > 0 {
			l.sample(ms, n*1_000_000/uint64(clat), d, n, off)
		} else {
			l.sample(ms, 0, d, n, off)
		}
	}
	if l := c.logs[logIOPS]; l != nil {
		if l.avg > 0 {
			l.rate(ms, n, d, false)
		} else {
			l.sample(ms, 1, d, n, off)
		}
	}
	if c.hist != nil {
		c.hist.record(ms, end-issue, d, n)
	}
}

// closeLogs writes out and closes the clone's logs.
func (c *clone) closeLogs() error {
	var first error
	for k, l := range c.logs {
		if l != nil {
			if err := l.close(); err != nil && first == nil {
				first = err
			}
			c.logs[k] = nil
		}
	}
	if c.hist != nil {
		if err := c.hist.close(); err != nil && first == nil {
			first = err
		}
		c.hist = nil
	}
	return first
}

// wantsLogs reports whether the job writes any log.
func wantsLogs(j *fiov1.Job) bool {
	l := j.GetLogs()
	return l != nil && (l.Lat != "" || l.Bw != "" || l.Iops != "" || l.Hist != "")
}
