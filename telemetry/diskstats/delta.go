package diskstats

// Delta is the increase of one device's counters over an interval, taken the
// way sysstat 12.x takes it, so that Stats reproduces `iostat -x`:
//
//   - I/O, merge and sector counts are 64-bit (unsigned long on LP64) and
//     subtracted modulo 2^64;
//   - the *Ticks, IOTicks and TimeInQueue fields are printed by the kernel as
//     32-bit ms counters and are subtracted modulo 2^32 (sysstat stores them
//     as unsigned int), so a counter that wrapped at 2^32 still yields the
//     right increase. A tick counter that went backwards for another reason
//     yields a huge value, exactly as iostat prints it (sysstat 12.6.1 does
//     not clamp %util or aqu-sz);
//   - if the sum of the I/O counts went down and every sector count went down
//     (or was zero), the device was removed and re-added: like iostat, the
//     previous sample is then taken as all zeros and Reset is set.
//
// Deltas of consecutive intervals add up, so a window's figures are the
// Stats of the summed Deltas over the summed interval.
type Delta struct {
	ReadIOs, ReadMerges, ReadSectors, ReadTicks             uint64
	WriteIOs, WriteMerges, WriteSectors, WriteTicks         uint64
	DiscardIOs, DiscardMerges, DiscardSectors, DiscardTicks uint64
	FlushIOs, FlushTicks                                    uint64
	IOTicks, TimeInQueue                                    uint64

	// InFlight is the number of requests in flight at the end (a gauge).
	InFlight uint64
	// Fields is the number of counters the kernel printed (see Counters).
	Fields int
	// Reset reports that the previous counters were taken as zero.
	Reset bool
}

// Diff returns the increase from prev to cur.
func Diff(prev, cur *Counters) Delta {
	reset := reinserted(prev, cur)
	if reset {
		prev = &Counters{}
	}
	return Delta{
		ReadIOs: cur.ReadIOs - prev.ReadIOs, ReadMerges: cur.ReadMerges - prev.ReadMerges,
		ReadSectors: cur.ReadSectors - prev.ReadSectors, ReadTicks: ticks(prev.ReadTicks, cur.ReadTicks),
		WriteIOs: cur.WriteIOs - prev.WriteIOs, WriteMerges: cur.WriteMerges - prev.WriteMerges,
		WriteSectors: cur.WriteSectors - prev.WriteSectors, WriteTicks: ticks(prev.WriteTicks, cur.WriteTicks),
		DiscardIOs: cur.DiscardIOs - prev.DiscardIOs, DiscardMerges: cur.DiscardMerges - prev.DiscardMerges,
		DiscardSectors: cur.DiscardSectors - prev.DiscardSectors, DiscardTicks: ticks(prev.DiscardTicks, cur.DiscardTicks),
		FlushIOs: cur.FlushIOs - prev.FlushIOs, FlushTicks: ticks(prev.FlushTicks, cur.FlushTicks),
		IOTicks: ticks(prev.IOTicks, cur.IOTicks), TimeInQueue: ticks(prev.TimeInQueue, cur.TimeInQueue),
		InFlight: cur.InFlight,
		Fields:   cur.Fields,
		Reset:    reset,
	}
}

// reinserted is iostat's test for a device that was removed and inserted
// again between two samples (iostat.c write_stats).
func reinserted(prev, cur *Counters) bool {
	sumPrev := prev.ReadIOs + prev.WriteIOs + prev.DiscardIOs + prev.FlushIOs
	sumCur := cur.ReadIOs + cur.WriteIOs + cur.DiscardIOs + cur.FlushIOs
	return sumCur < sumPrev &&
		(prev.ReadSectors == 0 || cur.ReadSectors < prev.ReadSectors) &&
		(prev.WriteSectors == 0 || cur.WriteSectors < prev.WriteSectors) &&
		(prev.DiscardSectors == 0 || cur.DiscardSectors < prev.DiscardSectors)
}

// ticks subtracts two 32-bit millisecond counters modulo 2^32.
func ticks(prev, cur uint64) uint64 { return uint64(uint32(cur) - uint32(prev)) }

// Add accumulates d into the receiver (for windows of several intervals).
// InFlight and Fields take d's values, the end of the window.
func (s *Delta) Add(d Delta) {
	s.ReadIOs += d.ReadIOs
	s.ReadMerges += d.ReadMerges
	s.ReadSectors += d.ReadSectors
	s.ReadTicks += d.ReadTicks
	s.WriteIOs += d.WriteIOs
	s.WriteMerges += d.WriteMerges
	s.WriteSectors += d.WriteSectors
	s.WriteTicks += d.WriteTicks
	s.DiscardIOs += d.DiscardIOs
	s.DiscardMerges += d.DiscardMerges
	s.DiscardSectors += d.DiscardSectors
	s.DiscardTicks += d.DiscardTicks
	s.FlushIOs += d.FlushIOs
	s.FlushTicks += d.FlushTicks
	s.IOTicks += d.IOTicks
	s.TimeInQueue += d.TimeInQueue
	s.InFlight, s.Fields = d.InFlight, d.Fields
	s.Reset = s.Reset || d.Reset
}
