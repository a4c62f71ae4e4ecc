package oltp

import (
	"math"
	"testing"
)

// TestMergeFairness: merged, the threads' fairness is over every thread;
// after a forced shutdown the execution time's average is the finished
// events' time per thread (each part's average before its cut-off events
// were counted), its deviation around that of the threads' sums with
// them, as sysbench reports one run of all the threads.
func TestMergeFairness(t *testing.T) {
	part := func(forced bool, avg float64, sums ...float64) *Summary {
		p := &Summary{Threads: len(sums), ForcedShutdown: forced, ExecTimeAvgSec: avg}
		for _, s := range sums {
			p.PerThread = append(p.PerThread, ThreadStat{Events: 1, SumSec: s})
		}
		return p
	}
	for _, tt := range []struct {
		name     string
		parts    []*Summary
		avg, dev float64
	}{
		{"normal", []*Summary{part(false, 1, 1, 1), part(false, 3, 3, 3)}, 2, 1},
		// Every thread blocked 2 s, nothing finished: sysbench's 0.0000/2.00.
		{"all cut off", []*Summary{part(true, 0, 2, 2), part(true, 0, 2, 2)}, 0, 2},
		// One part stopped before its cut counted (not forced), one forced.
		{"one part forced", []*Summary{part(false, 1, 1, 1), part(true, 0.5, 2, 2)}, 0.75, math.Sqrt((2*0.0625 + 2*1.5625) / 4)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := MergeSummaries(tt.parts, nil, nil)
			if math.Abs(m.ExecTimeAvgSec-tt.avg) > 1e-9 || math.Abs(m.ExecTimeStddevSec-tt.dev) > 1e-9 {
				t.Errorf("execution time %g/%g; want %g/%g", m.ExecTimeAvgSec, m.ExecTimeStddevSec, tt.avg, tt.dev)
			}
			if m.EventsAvg != 1 || m.EventsStddev != 0 {
				t.Errorf("events %g/%g; want 1/0", m.EventsAvg, m.EventsStddev)
			}
		})
	}
}
