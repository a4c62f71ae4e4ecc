package client

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// Counters whose name ends in BytesSuffix ("write_bytes", "read_bytes")
// count bytes moved; their sum is the MB/s column (MB = 10^6 bytes).
const BytesSuffix = "bytes"

// OpSummary is one operation's latency over a span, in milliseconds.
type OpSummary struct {
	Op        string  `json:"op"`
	Count     int64   `json:"count"`
	OpsPerSec float64 `json:"ops_per_sec"`
	MinMs     float64 `json:"min_ms"`
	MeanMs    float64 `json:"mean_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	// P95Ms is sysbench's default percentile.
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p99_9_ms"`
	MaxMs  float64 `json:"max_ms"`
	// MBPerSec is the bytes this operation moved (its "<op>_bytes"
	// counter) per second; 0 for an operation that moves none.
	MBPerSec float64 `json:"mb_per_sec,omitempty"`
}

// Totals are the numbers of one span: a phase merged, or one worker.
type Totals struct {
	Seconds float64 `json:"seconds"`
	// Ops are in the order lines show them (the write path first).
	Ops []OpSummary `json:"ops"`
	// Bytes and MBPerSec are every operation's bytes together.
	Bytes    int64            `json:"bytes"`
	MBPerSec float64          `json:"mb_per_sec"`
	Counters map[string]int64 `json:"counters"`
	// Series are the kernel-evidence series (block.*, redo.*, sys.*),
	// kept apart from the workload's Ops.
	Series []SeriesSummary `json:"series,omitempty"`
}

// WorkerSummary is one worker's part of a phase.
type WorkerSummary struct {
	Worker      string  `json:"worker"`
	StartSkewMs float64 `json:"start_skew_ms"`
	Lost        bool    `json:"lost,omitempty"`
	Error       string  `json:"error,omitempty"`
	Totals
}

// PhaseSummary is one phase: merged totals and the per-worker breakdown.
type PhaseSummary struct {
	Phase     string          `json:"phase"`
	State     string          `json:"state"`
	Intervals int             `json:"intervals"`
	Merged    Totals          `json:"merged"`
	Workers   []WorkerSummary `json:"workers"`
	// Devices and InnoDB are the phase's telemetry, per worker.
	Devices []DeviceSummary `json:"devices,omitempty"`
	InnoDB  []InnoDBSummary `json:"innodb,omitempty"`
}

// Summary is a run as a person reads it.
type Summary struct {
	RunID  string   `json:"run_id"`
	Kind   string   `json:"kind"`
	State  string   `json:"state"`
	Reason string   `json:"reason,omitempty"`
	Lost   []string `json:"lost,omitempty"`
	// WorkerIntervalsPruned is when retention dropped the per-worker
	// intervals (RFC 3339); workers then have no totals of their own.
	WorkerIntervalsPruned string `json:"worker_intervals_pruned,omitempty"`
	// Host are the run's host knobs per worker: before, set, read back.
	Host   []HostKnob     `json:"host,omitempty"`
	Phases []PhaseSummary `json:"phases"`
	// Txn is the kind's Kind.Txn: its tables count transactions.
	Txn bool `json:"-"`
}

// Summarize computes a run's summary from its reduced intervals (read with
// results.PerWorker). Percentiles come from merged histograms, never from
// averaging percentiles. k is what the run's kind declares.
func Summarize(r *results.Run, k Kind) (*Summary, error) {
	run := r.Record
	s := &Summary{RunID: run.GetId(), Kind: run.GetKindName(), Txn: k.Txn, State: stateName(run.GetState()),
		Reason: run.GetReason(), Lost: run.GetLost(), Host: HostKnobs(run)}
	if t := run.GetWorkerIntervalsPruned(); t != nil {
		s.WorkerIntervalsPruned = t.AsTime().UTC().Format(time.RFC3339)
	}
	for _, ph := range r.Phases {
		s.Phases = append(s.Phases, summarizePhase(ph, phaseIntervals(r, ph.Name())))
	}
	return s, nil
}

// phaseIntervals are a phase's merged intervals, in order.
func phaseIntervals(r *results.Run, phase string) []*writepathv1.MergedInterval {
	var out []*writepathv1.MergedInterval
	for _, mi := range r.Intervals {
		if mi.GetPhase() == phase {
			out = append(out, mi)
		}
	}
	return out
}

func summarizePhase(ph *results.Phase, ivs []*writepathv1.MergedInterval) PhaseSummary {
	rec := ph.Record
	ps := PhaseSummary{Phase: rec.GetName(), State: strings.ToLower(strings.TrimPrefix(rec.GetState().String(), "PHASE_STATE_")),
		Intervals: ph.Intervals, Merged: totals(ph.Merged)}
	for _, pw := range rec.GetWorkers() {
		t := ph.Workers[pw.GetWorker()]
		if t == nil {
			t = &results.Totals{Counters: map[string]int64{}}
		}
		ps.Workers = append(ps.Workers, WorkerSummary{Worker: pw.GetWorker(), Lost: pw.GetLost(), Error: pw.GetError(),
			StartSkewMs: ms(pw.GetStartSkew().AsDuration().Nanoseconds()), Totals: totals(t)})
	}
	summarizeTelemetry(&ps, ph, ivs)
	return ps
}

// totals turns reduced totals into the summary's numbers.
func totals(t *results.Totals) Totals {
	out := Totals{Seconds: t.Seconds, Counters: t.Counters}
	for _, n := range t.Ops() {
		if s, ok := series.Parse(n); ok {
			out.Series = append(out.Series, seriesSummary(s, t.Histogram(n), t.Seconds))
			continue
		}
		o := opSummary(n, t.Histogram(n), t.Seconds)
		if b, ok := t.Counters[n+"_"+BytesSuffix]; ok && t.Seconds > 0 {
			o.MBPerSec = float64(b) / t.Seconds / 1e6
		}
		out.Ops = append(out.Ops, o)
	}
	slices.SortStableFunc(out.Ops, func(a, b OpSummary) int { return opRank(a.Op) - opRank(b.Op) })
	for k, v := range t.Counters {
		if strings.HasSuffix(k, BytesSuffix) {
			out.Bytes += v
		}
	}
	if t.Seconds > 0 {
		out.MBPerSec = float64(out.Bytes) / t.Seconds / 1e6
	}
	return out
}

func opSummary(op string, h *hist.Histogram, seconds float64) OpSummary {
	ps := h.Percentiles([]float64{50, 90, 95, 99, 99.9})
	s := OpSummary{Op: op, Count: h.Count(), MinMs: ms(h.Min()), MeanMs: h.Mean() / 1e6,
		P50Ms: ms(ps[0]), P90Ms: ms(ps[1]), P95Ms: ms(ps[2]), P99Ms: ms(ps[3]), P999Ms: ms(ps[4]), MaxMs: ms(h.Max())}
	if seconds > 0 {
		s.OpsPerSec = float64(h.Count()) / seconds
	}
	return s
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func stateName(s writepathv1.RunState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "RUN_STATE_"))
}

// Cumulative is one operation's histogram over a run: of a phase (all
// phases if empty), merged or of one worker (r read with
// results.PerWorker).
func Cumulative(r *results.Run, phase, worker, op string) (*hist.Histogram, error) {
	var hs []*hist.Histogram
	names := map[string]bool{}
	for _, ph := range r.Phases {
		if phase != "" && ph.Name() != phase {
			continue
		}
		t := ph.Merged
		if worker != "" {
			if t = ph.Workers[worker]; t == nil {
				continue
			}
		}
		for _, n := range t.Ops() {
			names[n] = true
		}
		if h := t.Histogram(op); h != nil {
			hs = append(hs, h)
		}
	}
	if phase == "" && worker == "" { // also intervals of no phase the record names
		names = map[string]bool{}
		for _, n := range r.Ops() {
			names[n] = true
		}
		if h := r.Total(op); h != nil {
			hs = []*hist.Histogram{h}
		}
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("run %s has no operation %q (has %v)", r.Record.GetId(), op, slices.Sorted(maps.Keys(names)))
	}
	for _, h := range hs[1:] {
		if err := hs[0].Merge(h); err != nil {
			return nil, err
		}
	}
	return hs[0], nil
}
