package fio

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// read_iolog=: fio's version 2 ("file action [offset length]") and
// version 3 ("usec file action [offset length]") I/O logs, as written by
// write_iolog= here or by fio, replayed as fio's read_iolog_get does: the
// reads, writes, fsyncs and fdatasyncs in the log's order on the file it
// names, version 3's at the times logged (scaled by replay_time_scale,
// not waited for with replay_no_stall). The log is read where the command
// is parsed and travels in the spec, so a worker replays what the user's
// log says.

// Replay op codes in Job.replay_ops (reads and writes are directions).
const (
	replayFsync     = opSync
	replayFdatasync = opSync + 1
)

// maxReplayEntries bounds a log read into a spec.
const maxReplayEntries = 4 << 20

// setReadIolog reads the log into the job.
func setReadIolog(j *fiov1.Job, v string) error {
	f, err := os.Open(v)
	if err != nil {
		return fmt.Errorf("read_iolog: %w", err)
	}
	defer f.Close()
	j.ReadIolog = v
	j.ReplayOps, j.ReplayOffsets, j.ReplayLens, j.ReplayUsec = nil, nil, nil, nil
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<16)
	version := 0
	file := ""
	// fio's delay_since_ttime: each line's wait is its time minus the
	// previous line's, none while that is 0; file actions' waits are
	// carried to the next I/O (fio waits on them too).
	var lastT, carry uint64
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if line == 1 {
			switch t {
			case "fio version 2 iolog":
				version = 2
			case "fio version 3 iolog":
				version = 3
			default:
				return fmt.Errorf("read_iolog %s:1: %q is not a fio version 2 or 3 iolog header (fio: iolog version 1 is no longer supported)", v, t)
			}
			continue
		}
		if t == "" {
			continue
		}
		f := strings.Fields(t)
		if version == 3 {
			if len(f) < 3 {
				return fmt.Errorf("read_iolog %s:%d: %q: want \"usec file action [offset length]\"", v, line, t)
			}
			t, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				return fmt.Errorf("read_iolog %s:%d: time %q: %w", v, line, f[0], err)
			}
			if lastT != 0 && t >= lastT {
				carry += t - lastT
			}
			lastT = t
			f = f[1:]
		}
		if len(f) != 2 && len(f) != 4 {
			return fmt.Errorf("read_iolog %s:%d: %q: want \"file action [offset length]\"", v, line, t)
		}
		if file == "" {
			file = f[0]
		} else if f[0] != file {
			return fmt.Errorf("read_iolog %s:%d: the log names %s and %s; a job replays one file here", v, line, file, f[0])
		}
		if len(f) == 2 {
			switch f[1] {
			case "add", "open", "close":
				continue // the job's one file is opened for the whole replay
			}
			return fmt.Errorf("read_iolog %s:%d: bad file action %q (add, open, close)", v, line, f[1])
		}
		var op uint32
		switch f[1] {
		case "read":
			op = dirRead
		case "write":
			op = dirWrite
		case "sync":
			op = replayFsync
		case "datasync":
			op = replayFdatasync
		case "wait":
			if version == 3 {
				continue // fio ignores wait in version 3
			}
			return fmt.Errorf("read_iolog %s:%d: wait is not replayed here (use a version 3 log: its times are)", v, line)
		case "trim":
			return fmt.Errorf("read_iolog %s:%d: trims are not replayed here", v, line)
		default:
			return fmt.Errorf("read_iolog %s:%d: bad iolog action %q", v, line, f[1])
		}
		off, err1 := strconv.ParseUint(f[2], 10, 64)
		n, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("read_iolog %s:%d: offset %q and length %q must be numbers", v, line, f[2], f[3])
		}
		if (op == dirRead || op == dirWrite) && n == 0 {
			return fmt.Errorf("read_iolog %s:%d: %s of 0 bytes", v, line, f[1])
		}
		if len(j.ReplayOps) >= maxReplayEntries {
			return fmt.Errorf("read_iolog %s: more than %d entries", v, maxReplayEntries)
		}
		j.ReplayOps = append(j.ReplayOps, op)
		j.ReplayOffsets = append(j.ReplayOffsets, off)
		j.ReplayLens = append(j.ReplayLens, uint32(n))
		if version == 3 {
			j.ReplayUsec = append(j.ReplayUsec, carry)
			carry = 0
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read_iolog %s: %w", v, err)
	}
	if version == 0 {
		return fmt.Errorf("read_iolog %s: empty file", v)
	}
	if len(j.ReplayOps) == 0 {
		return fmt.Errorf("read_iolog %s: no I/O to replay", v)
	}
	j.Filename = file
	return nil
}

// finalizeReplay makes a replaying job's shape the log's, as fio sets
// td_ddir and max_bs from it: the directions it does, buffers as large as
// its largest I/O, and its file as large as the furthest byte it touches
// (unless size= says more).
func finalizeReplay(j *fiov1.Job) {
	if j.ReadIolog == "" {
		return
	}
	if j.ReplayRedirect != "" {
		j.Filename = j.ReplayRedirect
	}
	reads, writes := false, false
	var end uint64
	for i, op := range j.ReplayOps {
		switch op {
		case dirRead:
			reads = true
		case dirWrite:
			writes = true
		default:
			continue
		}
		j.Bs = max(j.Bs, uint64(j.ReplayLens[i]))
		end = max(end, j.ReplayOffsets[i]+uint64(j.ReplayLens[i]))
	}
	switch {
	case reads && writes:
		j.Rw = fiov1.ReadWrite_READ_WRITE_RW
	case writes:
		j.Rw = fiov1.ReadWrite_READ_WRITE_WRITE
	default:
		j.Rw = fiov1.ReadWrite_READ_WRITE_READ
	}
	j.ReadBs = &fiov1.BlockSizes{Min: j.Bs, Max: j.Bs}
	j.WriteBs = &fiov1.BlockSizes{Min: j.Bs, Max: j.Bs}
	j.Size = max(j.Size, end)
	j.Offset = 0
}

// replay is a clone's place in its job's log.
type replay struct {
	next      int
	scale     float64
	stall     bool
	lastIssue int64 // c.now() when the previous entry was issued
	offset    int64 // fio's time_offset: how much the last sleep overran
}

func newReplay(j *fiov1.Job) *replay {
	r := &replay{stall: len(j.ReplayUsec) > 0 && !j.ReplayNoStall, scale: 1}
	if s := j.ReplayTimeScale; s > 0 && s != 100 {
		r.scale = 100 / float64(s)
	}
	return r
}

// delay is fio's iolog_delay: wait until d after the last issue, less
// what the previous sleep overran.
func (r *replay) delay(c *clone, d int64) {
	orig := d
	since := c.now() - r.lastIssue
	if d < r.offset {
		r.offset = 0
		return
	}
	d -= r.offset
	if d < since {
		return
	}
	d -= since
	start := c.now()
	for d > 0 && !c.stop.Load() {
		step := min(d, int64(500*time.Millisecond))
		time.Sleep(time.Duration(step))
		d -= step
	}
	r.offset = max(c.now()-start-orig, 0)
}

// nextReplay is nextOp for a replaying clone: the log's next entry, once
// its time has come.
func (c *clone) nextReplay() (op int, off, n uint64) {
	r, j := c.replay, c.job
	if r.next >= len(j.ReplayOps) || c.stop.Load() {
		return opDone, 0, 0
	}
	i := r.next
	r.next++
	if r.stall && j.ReplayUsec[i] > 0 {
		r.delay(c, int64(float64(j.ReplayUsec[i])*r.scale*1000))
	}
	r.lastIssue = c.now()
	op, off, n = int(j.ReplayOps[i]), j.ReplayOffsets[i], uint64(j.ReplayLens[i])
	switch op {
	case replayFsync, replayFdatasync:
		c.datasync = op == replayFdatasync
		c.lastWrite = false
		if c.iolog != nil {
			what := "sync"
			if c.datasync {
				what = "datasync"
			}
			c.iolog.io(c.now(), what, c.lastOff, 0)
		}
		return opSync, 0, 0
	}
	c.ios++
	if c.rate.on {
		c.issuedRate(op, n)
	}
	if c.iolog != nil {
		c.iolog.io(c.now(), ioLogNames[op], off, n)
		c.lastOff = off
	}
	c.lastWrite = op == dirWrite
	if c.lastWrite {
		c.writesIssued++
	}
	return op, off, n
}
