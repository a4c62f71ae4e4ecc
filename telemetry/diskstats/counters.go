package diskstats

// Counters is one device's line of /proc/diskstats (see the kernel's
// Documentation/admin-guide/iostats.rst). I/O and merge counts and sectors
// are cumulative since boot; sectors are always 512 bytes whatever the
// device's block size. The *Ticks fields are milliseconds; the kernel prints
// them as 32-bit unsigned values, so they wrap at 2^32 ms (~49.7 days of
// busy time), and deltas are taken modulo 2^32 as iostat does.
type Counters struct {
	Major, Minor uint32

	ReadIOs, ReadMerges, ReadSectors, ReadTicks     uint64
	WriteIOs, WriteMerges, WriteSectors, WriteTicks uint64
	// InFlight is the number of requests issued but not completed (a gauge).
	InFlight uint64
	// IOTicks is the time the device had at least one request in flight
	// (ms); %util is its share of the interval.
	IOTicks uint64
	// TimeInQueue is the sum over requests of their time in flight (ms),
	// i.e. the integral of the queue depth; aqu-sz is its rate.
	TimeInQueue uint64

	// Discard counters: kernels >= 4.18 (18 fields per line).
	DiscardIOs, DiscardMerges, DiscardSectors, DiscardTicks uint64
	// Flush counters: kernels >= 5.5 (20 fields per line).
	FlushIOs, FlushTicks uint64

	// Fields is how many counters the kernel printed after the name: 4 (an
	// old-style partition: reads, read sectors, writes, write sectors), 11,
	// 15 (with discards) or 17 (with flushes).
	Fields int
}

// HasDiscards reports whether the kernel reported discard counters.
func (c *Counters) HasDiscards() bool { return c.Fields >= 15 }

// HasFlushes reports whether the kernel reported flush counters.
func (c *Counters) HasFlushes() bool { return c.Fields >= 17 }

// Extended reports whether the line carries the full set of counters that
// iostat -x needs (an old 4-field partition line does not).
func (c *Counters) Extended() bool { return c.Fields >= 11 }

// set stores the i-th counter after the device name, in the kernel's order.
func (c *Counters) set(i int, v uint64) {
	switch i {
	case 0:
		c.ReadIOs = v
	case 1:
		c.ReadMerges = v
	case 2:
		c.ReadSectors = v
	case 3:
		c.ReadTicks = v
	case 4:
		c.WriteIOs = v
	case 5:
		c.WriteMerges = v
	case 6:
		c.WriteSectors = v
	case 7:
		c.WriteTicks = v
	case 8:
		c.InFlight = v
	case 9:
		c.IOTicks = v
	case 10:
		c.TimeInQueue = v
	case 11:
		c.DiscardIOs = v
	case 12:
		c.DiscardMerges = v
	case 13:
		c.DiscardSectors = v
	case 14:
		c.DiscardTicks = v
	case 15:
		c.FlushIOs = v
	case 16:
		c.FlushTicks = v
	}
}

// fixOldPartition moves the four counters of a pre-2.6.25 partition line
// (reads, read sectors, writes, write sectors) to their fields, as iostat
// does for its 7-field case.
func (c *Counters) fixOldPartition() {
	rIOs, rSect, wIOs, wSect := c.ReadIOs, c.ReadMerges, c.ReadSectors, c.ReadTicks
	*c = Counters{Major: c.Major, Minor: c.Minor, Fields: 4,
		ReadIOs: rIOs, ReadSectors: rSect, WriteIOs: wIOs, WriteSectors: wSect}
}
