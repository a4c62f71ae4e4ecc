package diskprofile

import "time"

// Cap is a pair of limits in force; zero fields are uncapped.
type Cap struct {
	IOPS int64
	BPS  int64 // bytes/s
}

// Bucket is a profile's credit balance: pure arithmetic over the I/Os and
// bytes the device did in each step, no clock and no I/O, so the burst and
// refill figures are exact in tests. Not safe for concurrent use.
type Bucket struct {
	p       Profile // with defaults
	balance float64 // credits
	burst   bool    // the burst cap is in force
}

// NewBucket starts a bucket at the profile's starting balance.
func NewBucket(p Profile) *Bucket {
	p = p.withDefaults()
	b := &Bucket{p: p}
	switch {
	case !p.Bursts():
	case p.Credits < 0:
		b.balance = float64(p.Bucket)
	default:
		b.balance = float64(min(p.Credits, p.Bucket))
	}
	b.burst = b.balance > 0
	return b
}

// Balance is the credits left.
func (b *Bucket) Balance() float64 { return b.balance }

// Cap is the cap in force: burst while credits last, else baseline.
func (b *Bucket) Cap() Cap {
	if b.burst {
		return Cap{IOPS: b.p.BurstIOPS, BPS: b.p.BurstBPS}
	}
	return Cap{IOPS: b.p.BaselineIOPS, BPS: b.p.BaselineBPS}
}

// Step accounts ios I/Os and bytes bytes done over dt and returns the cap
// for the next step. Above the baseline every excess I/O spends a credit
// (excess bandwidth converted at (burst-baseline) IOPS per (burst-baseline)
// B/s); at or below it the bucket earns Refill·dt times the unused share
// of the baseline. The burst cap comes back once a step's worth of burst
// is in the bucket, so the cap does not flap at empty.
func (b *Bucket) Step(ios, bytes int64, dt time.Duration) Cap {
	if !b.p.Bursts() || dt <= 0 {
		return b.Cap()
	}
	sec := dt.Seconds()
	p := b.p
	excess := float64(ios) - float64(p.BaselineIOPS)*sec
	if p.BaselineBPS > 0 && p.BurstBPS > p.BaselineBPS {
		rate := float64(p.BurstIOPS-p.BaselineIOPS) / float64(p.BurstBPS-p.BaselineBPS)
		excess = max(excess, (float64(bytes)-float64(p.BaselineBPS)*sec)*rate)
	}
	if excess > 0 {
		b.balance = max(0, b.balance-excess)
	} else {
		used := float64(ios) / (float64(p.BaselineIOPS) * sec)
		if p.BaselineBPS > 0 {
			used = max(used, float64(bytes)/(float64(p.BaselineBPS)*sec))
		}
		b.balance = min(float64(p.Bucket), b.balance+float64(p.refill())*sec*max(0, 1-used))
	}
	switch {
	case b.balance <= 0:
		b.burst = false
	case !b.burst && b.balance >= float64(p.BurstIOPS-p.BaselineIOPS)*StepInterval.Seconds():
		b.burst = true
	}
	return b.Cap()
}

// Idle earns credits for a time the disk did nothing (between phases).
func (b *Bucket) Idle(d time.Duration) {
	if b.p.Bursts() && d > 0 {
		b.Step(0, 0, d)
	}
}

// StepInterval is the controller's step.
const StepInterval = 100 * time.Millisecond
