package fio

import (
	"fmt"
	"math"
	"strings"
	"time"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// etaState is what fio's ETA line (eta.c's display_thread_status) needs
// between intervals: the bytes done so far.
type etaState struct {
	jobs       []*fiov1.Job
	start      time.Time
	done       uint64
	lastLength int
}

// line renders interval s as fio 3.33's ETA line, without the line end:
// "Jobs: 1 (f=1): [W(1)][75.0%][w=495MiB/s][w=127k IOPS][eta 00m:01s]"
// (every job shown running; the percentage and eta from the elapsed
// time against the jobs' runtime, or the bytes done against their size).
func (e *etaState) line(s workload.Snapshot) string {
	secs := s.End.Sub(s.Start).Seconds()
	if secs <= 0 {
		secs = 1
	}
	var rates, iops [nDirs]uint64
	for d, name := range dirLabel {
		b := s.Counters[name+"_bytes"]
		e.done += uint64(max(b, 0))
		rates[d] = uint64(float64(b) / secs)
		if h := s.Ops[name]; h != nil {
			iops[d] = uint64(float64(h.Count()) / secs)
		}
	}
	var run strings.Builder
	jobs, files := 0, 0
	var prev byte
	n := 0
	flush := func() {
		if n > 0 {
			if run.Len() > 0 {
				run.WriteByte(',')
			}
			fmt.Fprintf(&run, "%c(%d)", prev, n)
		}
	}
	for _, j := range e.jobs {
		c := runChar(j)
		for range max(j.Numjobs, 1) {
			jobs++
			files += int(max(j.Nrfiles, 1))
			if c != prev {
				flush()
				prev, n = c, 0
			}
			n++
		}
	}
	flush()
	elapsed := s.End.Sub(e.start).Seconds()
	eta := e.remaining(elapsed)
	perc := 0.0
	if elapsed+eta > 0 {
		perc = elapsed / (elapsed + eta) * 100
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Jobs: %d (f=%d): [%s][%3.1f%%]", jobs, files, run.String(), perc)
	var rs, is []string
	for d := range nDirs {
		if rates[d] > 0 || iops[d] > 0 {
			rs = append(rs, fmt.Sprintf("%c=%s", dirLabel[d][0], num2str(rates[d], 4, true, "B/s")))
			is = append(is, fmt.Sprintf("%c=%s", dirLabel[d][0], num2str(iops[d], 4, false, "")))
		}
	}
	if len(rs) > 0 {
		fmt.Fprintf(&b, "[%s][%s IOPS]", strings.Join(rs, ","), strings.Join(is, ","))
	}
	fmt.Fprintf(&b, "[eta %s]", etaText(uint64(math.Round(eta))))
	out := b.String()
	if pad := e.lastLength - len(out); pad > 0 {
		out += strings.Repeat(" ", pad) // as fio blanks what a longer line left
	}
	e.lastLength = len(out)
	return out
}

// remaining is the jobs' estimated seconds left after elapsed: the
// longest runtime left, or, for jobs bound by size, the bytes left at the
// rate so far.
func (e *etaState) remaining(elapsed float64) float64 {
	var total uint64
	left := 0.0
	sized := false
	for _, j := range e.jobs {
		rt := time.Duration(j.RuntimeNs + j.RampTimeNs).Seconds()
		if j.TimeBased && rt > 0 {
			left = math.Max(left, rt-elapsed)
			continue
		}
		size := j.IoSize
		if size == 0 {
			size = j.Size
		}
		total += size * uint64(max(j.Loops, 1)) * uint64(max(j.Numjobs, 1))
		sized = true
		if rt > 0 {
			left = math.Max(left, 0) // bounded by its runtime below
		}
	}
	if sized && total > 0 && e.done > 0 && elapsed > 0 {
		bySize := elapsed * (float64(total)/float64(e.done) - 1)
		for _, j := range e.jobs {
			if rt := time.Duration(j.RuntimeNs).Seconds(); !j.TimeBased && rt > 0 {
				bySize = math.Min(bySize, rt-elapsed)
			}
		}
		left = math.Max(left, bySize)
	}
	return math.Max(left, 0)
}

// runChar is fio's letter for a running job (eta.c's check_str_update).
func runChar(j *fiov1.Job) byte {
	switch j.Rw {
	case fiov1.ReadWrite_READ_WRITE_READ:
		return 'R'
	case fiov1.ReadWrite_READ_WRITE_RANDREAD:
		return 'r'
	case fiov1.ReadWrite_READ_WRITE_RANDWRITE:
		return 'w'
	case fiov1.ReadWrite_READ_WRITE_RW:
		return mixChar(j, 'R', 'W', 'M')
	case fiov1.ReadWrite_READ_WRITE_RANDRW:
		return mixChar(j, 'r', 'w', 'm')
	case fiov1.ReadWrite_READ_WRITE_TRIM:
		return 'D'
	case fiov1.ReadWrite_READ_WRITE_RANDTRIM:
		return 'd'
	case fiov1.ReadWrite_READ_WRITE_RANDTRIMWRITE:
		return 'w' // fio's td_write (trimwrite is not td_rw)
	}
	return 'W'
}

func mixChar(j *fiov1.Job, read, write, mixed byte) byte {
	switch j.Rwmixread {
	case 100:
		return read
	case 0:
		return write
	}
	return mixed
}

// etaText is fio's eta_to_str: "00m:05s", "01h:00m:05s", "01d:00h:00m:05s".
func etaText(secs uint64) string {
	s, m, h, d := secs%60, secs/60%60, secs/3600%24, secs/86400
	switch {
	case d > 0:
		return fmt.Sprintf("%02dd:%02dh:%02dm:%02ds", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%02dh:%02dm:%02ds", h, m, s)
	}
	return fmt.Sprintf("%02dm:%02ds", m, s)
}
