package fio

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// diskStat is one /proc/diskstats line's counters that fio's disk_util
// reports (ticks are milliseconds).
type diskStat struct {
	readIOs, readMerges, readTicks    uint64
	writeIOs, writeMerges, writeTicks uint64
	ioTicks, inQueue                  uint64
}

// diskUtil is a device's counters over the run, as in fio's "disk_util".
type diskUtil struct {
	name string
	d    diskStat
	util float64 // percent of the run the device was busy
}

// readDiskStats returns the counters of the named devices.
func readDiskStats(names map[string]bool) map[string]diskStat {
	out := map[string]diskStat{}
	f, err := os.Open("/proc/diskstats")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 14 || !names[fl[2]] {
			continue
		}
		n := func(i int) uint64 { v, _ := strconv.ParseUint(fl[i], 10, 64); return v }
		out[fl[2]] = diskStat{
			readIOs: n(3), readMerges: n(4), readTicks: n(6),
			writeIOs: n(7), writeMerges: n(8), writeTicks: n(10),
			ioTicks: n(12), inQueue: n(13),
		}
	}
	return out
}

// diskDelta turns two snapshots taken elapsed apart into disk_util rows.
func diskDelta(before, after map[string]diskStat, elapsed time.Duration) []diskUtil {
	var out []diskUtil
	for name, a := range after {
		b := before[name]
		d := diskStat{
			readIOs: a.readIOs - b.readIOs, readMerges: a.readMerges - b.readMerges,
			readTicks: a.readTicks - b.readTicks, writeIOs: a.writeIOs - b.writeIOs,
			writeMerges: a.writeMerges - b.writeMerges, writeTicks: a.writeTicks - b.writeTicks,
			ioTicks: a.ioTicks - b.ioTicks, inQueue: a.inQueue - b.inQueue,
		}
		u := 0.0
		if ms := float64(elapsed.Milliseconds()); ms > 0 {
			u = min(100, float64(d.ioTicks)*100/ms)
		}
		out = append(out, diskUtil{name: name, d: d, util: u})
	}
	return out
}
