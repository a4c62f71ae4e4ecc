package fio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// rateState is fio's rate control for one clone: rate= and rate_iops=
// (per direction), rate_process=linear|poisson, and the floors rate_min=
// and rate_iops_min=. As in fio (backend.c's usec_for_io, io_u.c's
// rate_ddir), each direction has a time before which its next I/O may not
// start: linear, the bytes issued so far at the direction's rate; poisson,
// the sum of exponential gaps of mean 1/IOPS. The wait happens before an
// I/O is prepared, so it is never latency; an I/O that starts more than
// one interval late is counted (`late`), not hidden.
type rateState struct {
	on      bool
	poisson bool
	bps     [2]float64 // bytes per second per direction; 0: unlimited
	minBS   [2]int64
	issued  [2]int64 // bytes issued (fio's rate_io_issue_bytes)
	next    [2]int64 // ns since base: earliest start of the direction's next I/O
	until   int64    // set by rateDir: the caller sleeps until then; 0: go
	rnd     *rand.Rand

	// rate_min / rate_iops_min, checked as fio's __check_min_rate.
	minOn     bool
	minBytes  [2]int64
	minIOPS   int64
	checkTime [2]int64
	checkB    [2]int64
	checkIOs  [2]int64
	err       error
}

// rateSettle and rateCycle are fio's: no floor is checked in a job's
// first 2 s, then each direction's rate is measured over ratecycle=1000.
const (
	rateSettle = 2 * time.Second
	rateCycle  = time.Second
)

// setupRate reads the job's rate options (fio's __setup_rate: rate=
// wins over rate_iops=, which is IOPS times the direction's smallest
// block).
func (c *clone) setupRate() {
	j, r := c.job, &c.rate
	iops := j.RateIopsDir
	if len(iops) < 2 {
		iops = []uint64{j.RateIops, j.RateIops}
	}
	for d := range r.bps {
		r.minBS[d] = int64(max(c.gen.bs[d].min, 1))
		switch {
		case d < len(j.Rate) && j.Rate[d] > 0:
			r.bps[d] = float64(j.Rate[d])
		case iops[d] > 0:
			r.bps[d] = float64(iops[d]) * float64(r.minBS[d])
		}
		r.on = r.on || r.bps[d] > 0
		if d < len(j.RateMin) {
			r.minBytes[d] = int64(j.RateMin[d])
		}
	}
	r.minIOPS = int64(j.RateIopsMin)
	r.minOn = r.minBytes[0] > 0 || r.minBytes[1] > 0 || r.minIOPS > 0
	if r.poisson = j.RateProcess == fiov1.RateProcess_RATE_PROCESS_POISSON; r.poisson && r.on {
		r.rnd = rand.New(rand.NewPCG(c.seed, 0x9015))
	}
}

// rateDir is fio's rate_ddir: the direction the next I/O takes and, when
// both directions are ahead of their rates, how long to wait first
// (r.until). A direction behind its rate goes at once; in a mixed job an
// ahead direction yields to the other one if that one is behind.
func (c *clone) rateDir(d int) int {
	r := &c.rate
	now := c.now()
	if r.next[d] <= now {
		c.countLate(d, now)
		return d
	}
	o := d ^ 1
	wait := r.next[d] - now
	if c.gen.readPct != 0 && c.gen.readPct != 100 {
		if r.next[o] <= now {
			c.countLate(o, now)
			return o
		}
		if r.next[o] < r.next[d] {
			wait, d = r.next[o]-now, o
		}
	}
	r.until = now + wait
	return d
}

// countLate counts an I/O that starts more than one interval after its
// time.
func (c *clone) countLate(d int, now int64) {
	r := &c.rate
	if r.bps[d] == 0 || !c.recording || r.next[d] == 0 {
		return
	}
	if step := float64(r.minBS[d]) * 1e9 / r.bps[d]; float64(now-r.next[d]) > step {
		c.st.late++
	}
}

// issuedRate accounts n bytes issued in direction d and sets the time of
// its next I/O (fio's usec_for_io, in ns).
func (c *clone) issuedRate(d int, n uint64) {
	r := &c.rate
	if r.bps[d] == 0 {
		return
	}
	r.issued[d] += int64(n)
	if r.poisson {
		iops := r.bps[d] / float64(r.minBS[d])
		r.next[d] += int64(1e9 / iops * -math.Log(1-r.rnd.Float64()))
		return
	}
	r.next[d] = int64(float64(r.issued[d]) / r.bps[d] * 1e9)
}

// pace sleeps until the time rateDir set, if any, never past the job's
// end and waking every 100 ms for a stop.
func (c *clone) pace() {
	until := c.rate.until
	if until == 0 {
		return
	}
	c.rate.until = 0
	if c.endAt > 0 {
		until = min(until, c.endAt)
	}
	for {
		now := c.now()
		if now >= until || c.stop.Load() {
			return
		}
		time.Sleep(time.Duration(min(until-now, int64(100*time.Millisecond))))
	}
}

// checkMinRate is fio's check of rate_min= and rate_iops_min=: after the
// first 2 s, each direction that did I/O must reach the floor over every
// ratecycle, else the job ends with EIO and fio's message.
func (c *clone) checkMinRate(now int64) bool {
	r := &c.rate
	if !r.minOn || !c.recording || r.err != nil || now < int64(rateSettle) {
		return r.err != nil
	}
	for d := range r.checkTime {
		ds := &c.st.dir[d]
		if ds.bytes == 0 || (r.minBytes[d] == 0 && r.minIOPS == 0) {
			continue
		}
		if r.checkTime[d] != 0 {
			spent := (now - r.checkTime[d]) / int64(time.Millisecond)
			if spent < rateCycle.Milliseconds() {
				continue
			}
			if r.minBytes[d] > 0 {
				if got := (ds.bytes - r.checkB[d]) * 1000 / spent; got < r.minBytes[d] {
					r.err = fmt.Errorf("%s: rate_min=%dB/s not met, got %dB/s: %w", c.job.Name, r.minBytes[d], got, unix.EIO)
					return true
				}
			} else if got := (ds.ios - r.checkIOs[d]) * 1000 / spent; got < r.minIOPS {
				r.err = fmt.Errorf("%s: rate_iops_min=%d not met, got %d IOPS: %w", c.job.Name, r.minIOPS, got, unix.EIO)
				return true
			}
		}
		r.checkTime[d], r.checkB[d], r.checkIOs[d] = now, ds.bytes, ds.ios
	}
	return false
}

// setSubmitMode reads io_submit_mode=: inline, the job's thread submits
// and reaps (and quiesces before a rate wait); offload, a pool of iodepth
// threads performs the I/O (engine_offload.go).
func setSubmitMode(j *fiov1.Job, v string) error {
	switch strings.TrimSpace(v) {
	case "inline":
		j.SubmitOffload = false
		return nil
	case "offload":
		j.SubmitOffload = true
		return nil
	}
	return fmt.Errorf("%q: want inline or offload", v)
}
