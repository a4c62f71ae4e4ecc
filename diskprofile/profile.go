package diskprofile

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Profile is a volume type's performance: caps, burst and credits. Zero
// IOPS or bandwidth means that dimension is not capped.
type Profile struct {
	// Name is a built-in's name, or "custom".
	Name string
	// BaselineIOPS and BaselineBPS (bytes/s) are the caps once the credits
	// are gone (or always, without a bucket).
	BaselineIOPS, BaselineBPS int64
	// BurstIOPS and BurstBPS are the caps while credits last; 0 means the
	// baseline (no burst).
	BurstIOPS, BurstBPS int64
	// Bucket is the credit bucket's size in I/O credits; 0: no burst.
	Bucket int64
	// Refill is how many credits a second the bucket earns while the disk
	// is idle; 0 means BaselineIOPS (as gp2 earns).
	Refill int64
	// Credits, if 0 or more, is the balance every phase starts with.
	// Negative (the default): a full bucket at first use, then the balance
	// carries over between phases and runs on the device, earning while
	// idle, as a cloud volume's does.
	Credits int64
	// Latency is added to every I/O (dm-delay); 0: none.
	Latency time.Duration
	// Source says where the figures come from (built-ins).
	Source string
}

// Bursts reports whether the profile has burst credits.
func (p Profile) Bursts() bool { return p.Bucket > 0 }

// Capped reports whether the profile caps anything.
func (p Profile) Capped() bool { return p.BaselineIOPS > 0 || p.BaselineBPS > 0 }

// BurstSeconds is how long a full bucket lasts at the burst cap:
// bucket/(burst-baseline). Zero without a burst.
func (p Profile) BurstSeconds() float64 {
	if !p.Bursts() || p.BurstIOPS <= p.BaselineIOPS {
		return 0
	}
	return float64(p.Bucket) / float64(p.BurstIOPS-p.BaselineIOPS)
}

// refill is the effective idle earning rate.
func (p Profile) refill() int64 {
	if p.Refill > 0 {
		return p.Refill
	}
	return p.BaselineIOPS
}

// withDefaults fills burst fields left 0 and the starting balance.
func (p Profile) withDefaults() Profile {
	if p.BurstIOPS == 0 {
		p.BurstIOPS = p.BaselineIOPS
	}
	if p.BurstBPS == 0 {
		p.BurstBPS = p.BaselineBPS
	}
	return p
}

// Limits for a profile's numbers: no cloud volume comes near them, and
// they keep the credit arithmetic far from overflow.
const (
	MaxIOPS    = 100_000_000
	MaxBPS     = 1 << 40 // 1 TiB/s
	MaxBucket  = 1 << 50
	MaxLatency = 10 * time.Second
)

// Validate checks the numbers; every problem is on the one line.
func (p Profile) Validate() error {
	var errs []string
	add := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	if !nameRe.MatchString(p.Name) {
		add("name %.64q: want 1-64 of a-z, 0-9, -", p.Name)
	}
	for _, f := range []struct {
		name string
		v    int64
		max  int64
	}{{"baseline_iops", p.BaselineIOPS, MaxIOPS}, {"burst_iops", p.BurstIOPS, MaxIOPS},
		{"baseline_mbps", p.BaselineBPS, MaxBPS}, {"burst_mbps", p.BurstBPS, MaxBPS},
		{"bucket", p.Bucket, MaxBucket}, {"refill", p.Refill, MaxIOPS}} {
		if f.v < 0 {
			add("%s %d is negative", f.name, f.v)
		} else if f.v > f.max {
			add("%s %d is above the limit %d", f.name, f.v, f.max)
		}
	}
	if p.Bucket > 0 && p.Credits > p.Bucket {
		add("credits %d exceed the bucket %d", p.Credits, p.Bucket)
	}
	if p.Latency < 0 || p.Latency > MaxLatency {
		add("latency %s is outside 0..%s", p.Latency, MaxLatency)
	}
	d := p.withDefaults()
	if d.BurstIOPS > 0 && d.BurstIOPS < d.BaselineIOPS {
		add("burst_iops %d is below baseline_iops %d", d.BurstIOPS, d.BaselineIOPS)
	}
	if d.BurstBPS > 0 && d.BurstBPS < d.BaselineBPS {
		add("burst_mbps %s is below baseline_mbps %s", mbps(d.BurstBPS), mbps(d.BaselineBPS))
	}
	if (p.BurstIOPS > 0 && p.BaselineIOPS == 0) || (p.BurstBPS > 0 && p.BaselineBPS == 0) {
		add("a burst needs a baseline of the same dimension (0 means uncapped)")
	}
	switch {
	case p.Bucket > 0 && d.BurstIOPS <= d.BaselineIOPS:
		add("bucket %d needs burst_iops above baseline_iops (credits are I/Os above the baseline)", p.Bucket)
	case p.Bucket == 0 && (d.BurstIOPS > d.BaselineIOPS || d.BurstBPS > d.BaselineBPS):
		add("a burst above the baseline needs a credit bucket (bucket=N)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("disk profile %s: %s", p.Name, strings.Join(errs, "; "))
	}
	return nil
}

var nameRe = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

func mbps(bps int64) string { return fmt.Sprintf("%g", float64(bps)/1e6) }

// Builtins are the named profiles. Their numbers are the providers'
// published figures (as of 2025), except capacity, whose baseline is
// FIELD.md's and whose burst is chosen to reproduce its 40 s of burst.
var builtins = []Profile{
	{Name: "gp2-100g", BaselineIOPS: 300, BurstIOPS: 3000, BaselineBPS: 128 << 20, Bucket: 5_400_000, Credits: -1,
		Source: "AWS EBS gp2, 100 GiB: 3 IOPS/GiB baseline, burst 3,000 IOPS from a 5.4 million I/O-credit bucket earned at the baseline rate, 128 MiB/s up to 170 GiB"},
	{Name: "gp3", BaselineIOPS: 3000, BaselineBPS: 125 << 20,
		Source: "AWS EBS gp3 default: 3,000 IOPS and 125 MiB/s at any size, no burst credits"},
	{Name: "azure-p10", BaselineIOPS: 500, BurstIOPS: 3500, BaselineBPS: 100e6, BurstBPS: 170e6, Bucket: 5_400_000, Credits: -1,
		Source: "Azure Premium SSD P10 (128 GiB): 500 IOPS / 100 MB/s provisioned, credit-based burst to 3,500 IOPS / 170 MB/s for 30 min from a full bucket"},
	{Name: "capacity", BaselineIOPS: 5000, BurstIOPS: 10000, BaselineBPS: 140e6, BurstBPS: 250e6, Bucket: 200_000, Credits: -1,
		Source: "FIELD.md's capacity-class 500 GB cloud disk: baseline 5,000 IOPS / 140 MB/s; burst 10,000 IOPS / 250 MB/s and a 200,000-credit bucket (40 s at full burst) are assumed, to match its 40 s of burst"},
	{Name: "capacity-mini", BaselineIOPS: 100, BurstIOPS: 1000, BaselineBPS: 4e6, BurstBPS: 40e6, Bucket: 9_000, Credits: -1,
		Source: "capacity scaled to a busy 2-vCPU test machine whose MariaDB issues ~300 I/Os a second under a cap: baseline 100 IOPS / 4 MB/s, burst 1,000 IOPS / 40 MB/s, 10 s of full burst (the examples/cloud-* campaigns)"},
	{Name: "bare", Source: "no caps: the same filesystem and loop device without throttling, for comparisons that differ in the caps only"},
}

// Builtin returns the named built-in profile.
func Builtin(name string) (Profile, bool) {
	i := slices.IndexFunc(builtins, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return builtins[i], true
}

// Builtins lists the built-in profiles.
func Builtins() []Profile { return slices.Clone(builtins) }

// BuiltinNames lists the built-ins' names.
func BuiltinNames() []string {
	out := make([]string, len(builtins))
	for i, p := range builtins {
		out[i] = p.Name
	}
	return out
}
