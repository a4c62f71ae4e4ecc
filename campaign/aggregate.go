package campaign

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/writepath/writepath/hist"
)

// Interval is one stored, merged interval of a run, as offsets from the
// run's common start.
type Interval struct {
	Start, End time.Duration
	Ops        int64           // operations completed (transactions, I/Os)
	Latency    *hist.Histogram // their latencies
	// DeviceWrite is the block layer's write latency (D2C) on the
	// worker's traced devices, nil where the run was not traced.
	DeviceWrite *hist.Histogram
}

// RoundStat is one run reduced over the campaign's window.
type RoundStat struct {
	Throughput float64 // operations per second inside the window
	P99        int64   // ns, from the window's merged histogram
	Ops        int64
	Span       time.Duration // time covered by the counted intervals
	Intervals  int
	// DeviceP99 is the p99 of the devices' write latency (D2C) in the
	// window, ns; 0 when the run has no block series.
	DeviceP99 int64
}

// ErrEmptyWindow reports a run with no interval inside the window.
var ErrEmptyWindow = errors.New("no interval inside the window")

// Stat reduces a run's intervals to the window: only intervals lying
// entirely inside [From, To) count. Percentiles come from merging the
// intervals' histograms, never from averaging their percentiles.
func (w Window) Stat(ivs []Interval) (RoundStat, error) {
	var s RoundStat
	merged := hist.New()
	var dev *hist.Histogram
	for _, iv := range ivs {
		if iv.Start < w.From || (w.To > 0 && iv.End > w.To) || iv.End <= iv.Start {
			continue
		}
		if iv.DeviceWrite != nil {
			if dev == nil {
				dev = hist.New()
			}
			if err := dev.Merge(iv.DeviceWrite); err != nil {
				return s, fmt.Errorf("window %s: device writes: %w", w, err)
			}
		}
		s.Ops += iv.Ops
		s.Span += iv.End - iv.Start
		s.Intervals++
		if err := merged.Merge(iv.Latency); err != nil {
			return s, fmt.Errorf("window %s: %w", w, err)
		}
	}
	if s.Intervals == 0 {
		return s, fmt.Errorf("window %s: %w", w, ErrEmptyWindow)
	}
	s.Throughput = float64(s.Ops) / s.Span.Seconds()
	s.P99 = merged.Percentile(99)
	if dev != nil {
		s.DeviceP99 = dev.Percentile(99)
	}
	return s, nil
}

// Agg is one table cell: the rounds of one cell on one group.
type Agg struct {
	Rounds                       int
	Throughput                   float64 // median over rounds
	ThroughputMin, ThroughputMax float64
	P99                          int64 // median over rounds, ns
	P99Min, P99Max               int64
	// DeviceP99 is the median over the traced rounds of the devices' p99
	// write latency (block D2C), ns; 0 when no round was traced.
	DeviceP99 int64 `json:",omitempty"`
	// DeltaPct is the median throughput's change against the baseline cell
	// on the same group, in percent; NaN-free: 0 when there is no baseline.
	DeltaPct float64
}

// Aggregate combines round statistics into an Agg.
func Aggregate(rounds []RoundStat) Agg {
	a := Agg{Rounds: len(rounds)}
	if len(rounds) == 0 {
		return a
	}
	tp := make([]float64, len(rounds))
	p99 := make([]float64, len(rounds))
	for i, r := range rounds {
		tp[i], p99[i] = r.Throughput, float64(r.P99)
	}
	a.Throughput, a.ThroughputMin, a.ThroughputMax = medianMinMax(tp)
	m, lo, hi := medianMinMax(p99)
	a.P99, a.P99Min, a.P99Max = int64(m), int64(lo), int64(hi)
	var dev []float64
	for _, r := range rounds {
		if r.DeviceP99 > 0 {
			dev = append(dev, float64(r.DeviceP99))
		}
	}
	if len(dev) > 0 {
		m, _, _ := medianMinMax(dev)
		a.DeviceP99 = int64(m)
	}
	return a
}

// medianMinMax returns the median (mean of the middle two for an even
// count), minimum and maximum. xs is sorted in place.
func medianMinMax(xs []float64) (med, lo, hi float64) {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		med = xs[n/2]
	} else {
		med = (xs[n/2-1] + xs[n/2]) / 2
	}
	return med, xs[0], xs[n-1]
}

// Table is the campaign's result: Rows[i].Aggs[j] is cell i on group j.
type Table struct {
	Campaign string
	Groups   []string
	Baseline string
	Window   Window
	Rows     []Row
}

// Row is one cell across every group.
type Row struct {
	Label string
	// Host says what the cell's runs read back of their host knobs where
	// the kernel kept another value than the one set ("nr_requests read
	// 4"); empty when every value held.
	Host string `json:",omitempty"`
	Aggs []Agg  // one per group, in Table.Groups order; Rounds 0 when none ran
}

// Key names one run's place in the matrix.
type Key struct {
	Cell  string
	Group string
}

// BuildTable aggregates round statistics keyed by cell and group into the
// result table, with deltas against the baseline cell.
func (s *Spec) BuildTable(stats map[Key][]RoundStat) Table {
	t := Table{Campaign: s.Name, Baseline: s.BaselineLabel(), Window: s.Window}
	for _, g := range s.Groups {
		t.Groups = append(t.Groups, g.Name)
	}
	for _, c := range s.Expand() {
		row := Row{Label: c.Label}
		for _, g := range t.Groups {
			row.Aggs = append(row.Aggs, Aggregate(stats[Key{c.Label, g}]))
		}
		t.Rows = append(t.Rows, row)
	}
	for gi, g := range t.Groups {
		base := Aggregate(stats[Key{t.Baseline, g}])
		for ri := range t.Rows {
			a := &t.Rows[ri].Aggs[gi]
			if base.Throughput > 0 && a.Rounds > 0 {
				a.DeltaPct = (a.Throughput/base.Throughput - 1) * 100
			}
		}
	}
	return t
}
