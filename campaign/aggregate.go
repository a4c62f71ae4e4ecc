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
	// Bytes is what the operations moved (an I/O kind's reads and
	// writes); 0 for transactions.
	Bytes int64
	// Sync is the latency of an I/O kind's syncs (fsync, fdatasync), nil
	// where the interval had none.
	Sync *hist.Histogram
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
	P95       int64   // ns, sysbench's default percentile
	MBps      float64 // bytes moved per second inside the window, 1e6 B
	// SyncP99 is the syncs' p99 in the window, ns; 0 without syncs.
	SyncP99 int64
	// Figures are the run's own figures beside the intervals': a kind's
	// (a crash run's recovery time, one sample per crash round) and the
	// telemetry columns the campaign asks for (one sample per run),
	// keyed as the tables name them.
	Figures map[string][]float64 `json:",omitempty"`
}

// Includes reports whether an interval [start, end) counts in the window:
// only intervals lying entirely inside it do.
func (w Window) Includes(start, end time.Duration) bool {
	return start >= w.From && (w.To <= 0 || end <= w.To) && end > start
}

// ErrEmptyWindow reports a run with no interval inside the window.
var ErrEmptyWindow = errors.New("no interval inside the window")

// Stat reduces a run's intervals to the window: only intervals lying
// entirely inside [From, To) count. Percentiles come from merging the
// intervals' histograms, never from averaging their percentiles.
func (w Window) Stat(ivs []Interval) (RoundStat, error) {
	var s RoundStat
	merged := hist.New()
	var dev, sync *hist.Histogram
	var bytes int64
	for _, iv := range ivs {
		if !w.Includes(iv.Start, iv.End) {
			continue
		}
		if iv.Sync != nil {
			if sync == nil {
				sync = hist.New()
			}
			if err := sync.Merge(iv.Sync); err != nil {
				return s, fmt.Errorf("window %s: syncs: %w", w, err)
			}
		}
		bytes += iv.Bytes
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
	s.P99, s.P95 = merged.Percentile(99), merged.Percentile(95)
	s.MBps = float64(bytes) / s.Span.Seconds() / 1e6
	if sync != nil && sync.Count() > 0 {
		s.SyncP99 = sync.Percentile(99)
	}
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
	P95      int64   // median over rounds, ns
	MBps     float64 // median over rounds
	// SyncP99 is the median over the rounds with syncs of their p99, ns;
	// 0 when no round synced.
	SyncP99 int64 `json:",omitempty"`
	// Figures are the rounds' figures (RoundStat.Figures) combined: every
	// sample of every round of the cell.
	Figures map[string]Figure `json:",omitempty"`
}

// Figure is one figure over a cell's samples: median, range, sum and
// count; DeltaPct is the median's change against the baseline cell's.
type Figure struct {
	Median, Min, Max, Sum float64
	N                     int
	DeltaPct              float64
}

// Aggregate combines round statistics into an Agg.
func Aggregate(rounds []RoundStat) Agg {
	a := Agg{Rounds: len(rounds)}
	if len(rounds) == 0 {
		return a
	}
	tp := make([]float64, len(rounds))
	p99 := make([]float64, len(rounds))
	p95 := make([]float64, len(rounds))
	mbps := make([]float64, len(rounds))
	samples := map[string][]float64{}
	for i, r := range rounds {
		tp[i], p99[i], p95[i], mbps[i] = r.Throughput, float64(r.P99), float64(r.P95), r.MBps
		for k, v := range r.Figures {
			samples[k] = append(samples[k], v...)
		}
	}
	a.Throughput, a.ThroughputMin, a.ThroughputMax = medianMinMax(tp)
	m, lo, hi := medianMinMax(p99)
	a.P99, a.P99Min, a.P99Max = int64(m), int64(lo), int64(hi)
	m, _, _ = medianMinMax(p95)
	a.P95 = int64(m)
	a.MBps, _, _ = medianMinMax(mbps)
	a.DeviceP99 = medianOfSet(rounds, func(r RoundStat) int64 { return r.DeviceP99 })
	a.SyncP99 = medianOfSet(rounds, func(r RoundStat) int64 { return r.SyncP99 })
	for k, v := range samples {
		if len(v) == 0 {
			continue
		}
		if a.Figures == nil {
			a.Figures = map[string]Figure{}
		}
		f := Figure{N: len(v)}
		for _, x := range v {
			f.Sum += x
		}
		f.Median, f.Min, f.Max = medianMinMax(v)
		a.Figures[k] = f
	}
	return a
}

// medianOfSet is the median of a figure over the rounds that have it
// (non-zero), 0 when none has.
func medianOfSet(rounds []RoundStat, get func(RoundStat) int64) int64 {
	var xs []float64
	for _, r := range rounds {
		if v := get(r); v > 0 {
			xs = append(xs, float64(v))
		}
	}
	if len(xs) == 0 {
		return 0
	}
	m, _, _ := medianMinMax(xs)
	return int64(m)
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
	// Kind is the campaign's workload (fio, oltp, crash).
	Kind string `json:",omitempty"`
	// KindColumns are the columns per group its kind declares
	// (workload.Meta.Tables.Columns, by report's names), set by whoever
	// builds the table with the kind's facts; nil: report's default.
	KindColumns []string `json:"-"`
	// Columns are the telemetry figures the campaign asked for
	// (Spec.Columns), in each cell's Figures under their Key.
	Columns  []Column `json:",omitempty"`
	Groups   []string
	Baseline string
	Window   Window
	Rows     []Row
}

// Column is a telemetry column of the table: its key in the cells'
// Figures and its unit ("/s", "kB/s", "ms", "%", "pages", "MiB").
type Column struct{ Key, Unit string }

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
	t := Table{Campaign: s.Name, Kind: s.Workload, Baseline: s.BaselineLabel(), Window: s.Window}
	for _, c := range s.Columns {
		t.Columns = append(t.Columns, Column{Key: c})
	}
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
			for k, f := range a.Figures {
				if b, ok := base.Figures[k]; ok && b.Median != 0 {
					f.DeltaPct = (f.Median/b.Median - 1) * 100
					a.Figures[k] = f
				}
			}
		}
	}
	return t
}

// The figures a kind reports for the table (workload.Meta.Figures): a
// crash run's per round. Times are milliseconds; the others are one
// sample per crash round that the table sums.
const (
	FigRecoveryMS   = "recovery_ms"       // first recovery marker to ready
	FigStartQueryMS = "start_to_query_ms" // process start to first query
	FigKillCommitMS = "kill_to_commit_ms" // kill to the first commit
	FigLost         = "lost_acknowledged" // acknowledged commits lost
	FigCrashRounds  = "crash_rounds"      // 1 per crash round
	FigFailed       = "failed"            // 1 per round that failed
	FigDamaged      = "damaged"           // 1 per round whose data was damaged
	FigKnownGap     = "known_gap"         // 1 per damage a known server gap explains
	FigLoadTPS      = "load_tps"          // the load's tps up to the kill
	FigLoadP99MS    = "load_p99_ms"       // the load's p99 up to the kill, ms
)
