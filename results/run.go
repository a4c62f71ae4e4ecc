package results

import (
	"maps"
	"slices"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Run is a stored run reduced by Read.
type Run struct {
	Record *writepathv1.Run
	// Intervals is the grid: every merged interval in stored order (phase,
	// then seq) with its stats, histograms and per-worker telemetry.
	Intervals []*writepathv1.MergedInterval
	// Phases follow Record.phases.
	Phases []*Phase
	// ops are each operation's histograms merged over every interval.
	ops map[string]opSum
}

// Phase is one phase reduced.
type Phase struct {
	Record *writepathv1.PhaseRecord
	// Intervals is how many merged intervals the phase stored.
	Intervals int
	// Merged is the phase's merged intervals summed.
	Merged *Totals
	// Workers are each worker's totals over the phase (Read with
	// PerWorker): as the coordinator stored them when the phase ended, or
	// summed from the snapshots. A worker without any (snapshots pruned
	// before totals existed, or none reported) is absent.
	Workers map[string]*Totals
	// Devices and Gauges are the telemetry windows, one per worker and
	// device or gauge, in worker, then name, order.
	Devices []*DeviceWindow
	Gauges  []*GaugeWindow

	devices map[[2]string]*DeviceWindow
	gauges  map[[2]string]*GaugeWindow
}

// Name is the phase's name.
func (p *Phase) Name() string { return p.Record.GetName() }

// Totals are the sums of a span of intervals: operations (histograms merged
// exactly), counters, seconds covered.
type Totals struct {
	Seconds   float64
	Counters  map[string]int64
	Intervals int
	ops       map[string]opSum
}

// opSum is one operation's histograms summed: dense for a phase's merged
// totals, sparse for a worker's (a fleet has thousands).
type opSum interface {
	Histogram() *hist.Histogram
	Count() int64
}

func newTotals() *Totals { return &Totals{Counters: map[string]int64{}, ops: map[string]opSum{}} }

// Ops names the operations recorded, sorted.
func (t *Totals) Ops() []string { return slices.Sorted(maps.Keys(t.ops)) }

// Histogram returns operation op's merged histogram (a new one on every
// call), or nil if it was not recorded.
func (t *Totals) Histogram(op string) *hist.Histogram {
	if s, ok := t.ops[op]; ok {
		return fresh(s)
	}
	return nil
}

// fresh is s as a Histogram of its own (an Accumulator's shares its
// memory).
func fresh(s opSum) *hist.Histogram {
	if a, ok := s.(*hist.Accumulator); ok {
		return a.Histogram().Clone()
	}
	return s.Histogram()
}

func (t *Totals) addCounters(c map[string]int64) {
	for k, v := range c {
		t.Counters[k] += v
	}
}

// Phase returns the phase named name, or nil.
func (r *Run) Phase(name string) *Phase {
	for _, p := range r.Phases {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// Ops names the operations of the whole run, sorted.
func (r *Run) Ops() []string { return slices.Sorted(maps.Keys(r.ops)) }

// Total returns operation op's histogram over every merged interval of the
// run, or nil if the run has none of it.
func (r *Run) Total(op string) *hist.Histogram {
	if a, ok := r.ops[op]; ok {
		return fresh(a)
	}
	return nil
}
