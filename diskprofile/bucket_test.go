package diskprofile

import (
	"math"
	"testing"
	"time"
)

// run steps b at a constant load for d in StepInterval steps and returns
// how long the burst cap lasted.
func run(b *Bucket, iops, bps float64, d time.Duration) (burst time.Duration) {
	step := StepInterval.Seconds()
	for t := time.Duration(0); t < d; t += StepInterval {
		c := b.Cap()
		ios, bytes := min(iops, float64(c.IOPS))*step, bps*step
		if c.BPS > 0 {
			bytes = min(bytes, float64(c.BPS)*step)
		}
		if c.IOPS > b.p.BaselineIOPS {
			burst += StepInterval
		}
		b.Step(int64(ios), int64(bytes), StepInterval)
	}
	return burst
}

func TestBucketBurstLastsBucketOverExcess(t *testing.T) {
	for _, p := range []Profile{
		{Name: "iops", BaselineIOPS: 1000, BurstIOPS: 3000, Bucket: 10_000, Credits: -1},
		{Name: "capacity", BaselineIOPS: 5000, BurstIOPS: 10000, BaselineBPS: 140e6, BurstBPS: 250e6, Bucket: 200_000, Credits: -1},
	} {
		want := time.Duration(p.BurstSeconds() * float64(time.Second))
		if got := run(NewBucket(p), 1e9, 0, 3*want); math.Abs(float64(got-want)) > float64(StepInterval) {
			t.Errorf("%s: saturating IOPS burst lasted %v; want %v (bucket/(burst-baseline))", p.Name, got, want)
		}
		if p.BaselineBPS > 0 {
			// 64 KiB writes: bandwidth-bound, IOPS well under the baseline.
			if got := run(NewBucket(p), 3000, 1e12, 3*want); math.Abs(float64(got-want)) > float64(StepInterval) {
				t.Errorf("%s: saturating bandwidth burst lasted %v; want %v", p.Name, got, want)
			}
		}
	}
}

func TestBucketRefill(t *testing.T) {
	p := Profile{BaselineIOPS: 1000, BurstIOPS: 3000, Bucket: 10_000, Refill: 500, Credits: 0}
	b := NewBucket(p)
	if b.Cap().IOPS != 1000 {
		t.Fatalf("empty bucket cap %v; want the baseline", b.Cap())
	}
	run(b, 0, 0, 4*time.Second)
	if got := b.Balance(); math.Abs(got-2000) > 1 {
		t.Errorf("after 4 s idle at refill 500/s: %.0f credits; want 2000", got)
	}
	if b.Cap().IOPS != 3000 {
		t.Errorf("cap with credits %v; want the burst", b.Cap())
	}
	b = NewBucket(p)
	run(b, 500, 0, 4*time.Second) // half the baseline: half the refill
	if got := b.Balance(); math.Abs(got-1000) > 1 {
		t.Errorf("after 4 s at half the baseline: %.0f credits; want 1000", got)
	}
	b.Idle(time.Hour)
	if b.Balance() != 10_000 {
		t.Errorf("after an hour idle: %.0f; want the bucket, 10000", b.Balance())
	}
}

func TestBucketHoldsAtBaseline(t *testing.T) {
	b := NewBucket(Profile{BaselineIOPS: 1000, BurstIOPS: 3000, Bucket: 1000, Credits: -1})
	run(b, 1e9, 0, 2*time.Second)
	flips := 0
	last := b.Cap()
	for range 100 { // saturating at the baseline earns nothing: no flapping
		c := b.Step(100, 0, StepInterval)
		if c != last {
			flips++
		}
		last = c
	}
	if flips != 0 || last.IOPS != 1000 {
		t.Errorf("at the baseline: %d cap changes, cap %v; want none and 1000", flips, last)
	}
}
