package blocktrace

import (
	"fmt"
	"io"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ProgramCost is what the kernel measured of the programs while
// MeasureCost was on: their run time and how often they ran.
type ProgramCost struct {
	Block, Syscalls time.Duration // run time of the block and syscall programs
	BlockRuns       uint64
	SyscallRuns     uint64
}

// MeasureCost turns on the kernel's BPF run-time statistics
// (BPF_ENABLE_STATS) until the returned Closer is closed: it is the
// benchmark's view of the programs' CPU cost, off in normal runs (it costs
// two clock reads per program run) and restored by Close, not a sysctl.
func MeasureCost() (io.Closer, error) {
	c, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return nil, fmt.Errorf("block tracing: enable BPF stats: %w", err)
	}
	return c, nil
}

// Cost sums the programs' statistics since they were loaded.
func (l *Loaded) Cost() (ProgramCost, error) {
	var c ProgramCost
	for _, n := range blockProgs {
		s, err := l.block.Programs[n].Stats()
		if err != nil {
			return c, fmt.Errorf("block tracing: stats of %s: %w", n, err)
		}
		c.Block += s.Runtime
		c.BlockRuns += s.RunCount
	}
	if l.sys != nil {
		for _, n := range sysProgs {
			s, err := l.sys.Programs[n].Stats()
			if err != nil {
				return c, fmt.Errorf("block tracing: stats of %s: %w", n, err)
			}
			c.Syscalls += s.Runtime
			c.SyscallRuns += s.RunCount
		}
	}
	return c, nil
}
