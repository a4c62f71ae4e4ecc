package diskstats

import "time"

// Stats is one device's `iostat -x` line for an interval. Field comments
// give the iostat column and the formula over the interval's Delta, with
// t the interval in seconds. Sectors are 512 bytes, so kB = sectors / 2.
type Stats struct {
	ReadsPerSec      float64 // r/s      = ReadIOs / t
	ReadKBPerSec     float64 // rkB/s    = ReadSectors / t / 2
	ReadMergesPerSec float64 // rrqm/s   = ReadMerges / t
	ReadMergePct     float64 // %rrqm    = ReadMerges / (ReadMerges + ReadIOs) * 100
	ReadAwaitMs      float64 // r_await  = ReadTicks / ReadIOs
	ReadReqKB        float64 // rareq-sz = ReadSectors / ReadIOs / 2

	WritesPerSec      float64 // w/s
	WriteKBPerSec     float64 // wkB/s
	WriteMergesPerSec float64 // wrqm/s
	WriteMergePct     float64 // %wrqm
	WriteAwaitMs      float64 // w_await
	WriteReqKB        float64 // wareq-sz

	DiscardsPerSec      float64 // d/s
	DiscardKBPerSec     float64 // dkB/s
	DiscardMergesPerSec float64 // drqm/s
	DiscardMergePct     float64 // %drqm
	DiscardAwaitMs      float64 // d_await
	DiscardReqKB        float64 // dareq-sz

	FlushesPerSec float64 // f/s     = FlushIOs / t
	FlushAwaitMs  float64 // f_await = FlushTicks / FlushIOs

	// QueueSize is aqu-sz = TimeInQueue(ms) / t / 1000: the average number
	// of requests in flight.
	QueueSize float64
	// UtilPct is %util = IOTicks(ms) / (t * 1000) * 100: the share of the
	// interval with at least one request in flight. For devices that serve
	// requests in parallel (NVMe, RAID) 100% does not mean saturated.
	UtilPct float64

	// HasDiscards and HasFlushes report whether the kernel counts them.
	HasDiscards, HasFlushes bool
}

// Stats computes the iostat -x figures of d over an interval of length
// interval. A zero or negative interval yields zero rates.
func (d Delta) Stats(interval time.Duration) Stats {
	t := interval.Seconds()
	s := Stats{HasDiscards: d.Fields >= 15, HasFlushes: d.Fields >= 17}
	s.ReadsPerSec, s.ReadKBPerSec, s.ReadMergesPerSec = rate(d.ReadIOs, t), rate(d.ReadSectors, t)/2, rate(d.ReadMerges, t)
	s.ReadMergePct, s.ReadAwaitMs, s.ReadReqKB = mergePct(d.ReadMerges, d.ReadIOs), per(d.ReadTicks, d.ReadIOs), per(d.ReadSectors, d.ReadIOs)/2
	s.WritesPerSec, s.WriteKBPerSec, s.WriteMergesPerSec = rate(d.WriteIOs, t), rate(d.WriteSectors, t)/2, rate(d.WriteMerges, t)
	s.WriteMergePct, s.WriteAwaitMs, s.WriteReqKB = mergePct(d.WriteMerges, d.WriteIOs), per(d.WriteTicks, d.WriteIOs), per(d.WriteSectors, d.WriteIOs)/2
	s.DiscardsPerSec, s.DiscardKBPerSec, s.DiscardMergesPerSec = rate(d.DiscardIOs, t), rate(d.DiscardSectors, t)/2, rate(d.DiscardMerges, t)
	s.DiscardMergePct, s.DiscardAwaitMs, s.DiscardReqKB = mergePct(d.DiscardMerges, d.DiscardIOs), per(d.DiscardTicks, d.DiscardIOs), per(d.DiscardSectors, d.DiscardIOs)/2
	s.FlushesPerSec, s.FlushAwaitMs = rate(d.FlushIOs, t), per(d.FlushTicks, d.FlushIOs)
	s.QueueSize = rate(d.TimeInQueue, t) / 1000
	// iostat: S_VALUE(tot_ticks) / 10 with the interval in 1/100 s, i.e.
	// ms per second / 10 = percent.
	s.UtilPct = rate(d.IOTicks, t) / 10
	return s
}

// rate is n per second over t seconds (iostat's S_VALUE).
func rate(n uint64, t float64) float64 {
	if t <= 0 {
		return 0
	}
	return float64(n) / t
}

// per is n per operation, 0 without operations (iostat's await and
// areq-sz: "ios ? ticks / (double) ios : 0.0").
func per(n, ios uint64) float64 {
	if ios == 0 {
		return 0
	}
	return float64(n) / float64(ios)
}

// mergePct is the share of requests that were merged into another:
// merges / (merges + ios) * 100 (iostat's %rrqm).
func mergePct(merges, ios uint64) float64 {
	if merges+ios == 0 {
		return 0
	}
	return float64(merges) / float64(merges+ios) * 100
}
