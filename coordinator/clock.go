package coordinator

import "time"

// clockSamples is how many recent ping round trips the offset estimate
// chooses from: enough to ride out a burst of queueing, recent enough to
// follow drift.
const clockSamples = 16

// clockSample is one ping round trip: the coordinator sent at t0 and got the
// answer at t2 (both its clock); the worker read its clock t1 in between.
type clockSample struct {
	rtt    time.Duration
	offset time.Duration // worker clock - coordinator clock
}

// clock estimates a worker's clock offset NTP-style: assuming the two legs
// of a round trip take equally long, offset = t1 - (t0 + rtt/2), with an
// error of at most rtt/2. The sample with the smallest rtt has the smallest
// error bound, so that one is the estimate.
type clock struct {
	samples [clockSamples]clockSample
	n       int
}

func (c *clock) add(t0, t1, t2 time.Time) {
	rtt := t2.Sub(t0)
	if rtt < 0 {
		return
	}
	c.samples[c.n%clockSamples] = clockSample{rtt: rtt, offset: t1.Sub(t0.Add(rtt / 2))}
	c.n++
}

// estimate returns the best sample; ok is false before the first one.
func (c *clock) estimate() (s clockSample, ok bool) {
	n := min(c.n, clockSamples)
	for i := range n {
		if !ok || c.samples[i].rtt < s.rtt {
			s, ok = c.samples[i], true
		}
	}
	return s, ok
}
