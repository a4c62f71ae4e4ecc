package client

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
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
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p99_9_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// Totals are the numbers of one span: a phase merged, or one worker.
type Totals struct {
	Seconds  float64          `json:"seconds"`
	Ops      []OpSummary      `json:"ops"`
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
	InnoDB  []GaugeSummary  `json:"innodb,omitempty"`
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
}

// Summarize computes a run's summary from its stored intervals. Percentiles
// come from merging histograms, never from averaging percentiles.
func Summarize(r *writepathv1.GetRunResponse) (*Summary, error) {
	run := r.GetRun()
	s := &Summary{RunID: run.GetId(), Kind: run.GetKindName(), State: stateName(run.GetState()),
		Reason: run.GetReason(), Lost: run.GetLost(), Host: HostKnobs(run)}
	if t := run.GetWorkerIntervalsPruned(); t != nil {
		s.WorkerIntervalsPruned = t.AsTime().UTC().Format(time.RFC3339)
	}
	for _, ph := range run.GetPhases() {
		ps, err := summarizePhase(ph, r)
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", ph.GetName(), err)
		}
		s.Phases = append(s.Phases, ps)
	}
	return s, nil
}

func summarizePhase(ph *writepathv1.PhaseRecord, r *writepathv1.GetRunResponse) (PhaseSummary, error) {
	ps := PhaseSummary{Phase: ph.GetName(), State: strings.ToLower(strings.TrimPrefix(ph.GetState().String(), "PHASE_STATE_"))}
	merged := newTally()
	for _, mi := range r.GetIntervals() {
		if mi.GetPhase() != ph.GetName() {
			continue
		}
		ps.Intervals++
		if err := merged.add(mi.GetOps(), mi.GetCounters(), mi.GetSeconds()); err != nil {
			return ps, err
		}
	}
	ps.Merged = merged.totals()
	for _, pw := range ph.GetWorkers() {
		w := newTally()
		for _, wi := range r.GetWorkerIntervals() {
			iv := wi.GetInterval()
			if wi.GetWorker() != pw.GetWorker() || iv.GetPhase() != ph.GetName() {
				continue
			}
			if err := w.add(iv.GetOps(), iv.GetCounters(), iv.GetEnd().AsTime().Sub(iv.GetStart().AsTime()).Seconds()); err != nil {
				return ps, fmt.Errorf("worker %s: %w", pw.GetWorker(), err)
			}
		}
		ps.Workers = append(ps.Workers, WorkerSummary{Worker: pw.GetWorker(), Lost: pw.GetLost(), Error: pw.GetError(),
			StartSkewMs: ms(pw.GetStartSkew().AsDuration().Nanoseconds()), Totals: w.totals()})
	}
	summarizeTelemetry(&ps, r)
	return ps, nil
}

// tally accumulates intervals into cumulative histograms and sums.
type tally struct {
	ops      map[string]*hist.Histogram
	counters map[string]int64
	seconds  float64
}

func newTally() *tally {
	return &tally{ops: map[string]*hist.Histogram{}, counters: map[string]int64{}}
}

func (t *tally) add(ops []*writepathv1.OpHistogram, counters map[string]int64, seconds float64) error {
	for _, o := range ops {
		h, err := hist.Decode(o.GetHdr())
		if err != nil {
			return fmt.Errorf("op %s: %w", o.GetOp(), err)
		}
		if t.ops[o.GetOp()] == nil {
			t.ops[o.GetOp()] = hist.New()
		}
		if err := t.ops[o.GetOp()].Merge(h); err != nil {
			return err
		}
	}
	for k, v := range counters {
		t.counters[k] += v
	}
	t.seconds += seconds
	return nil
}

func (t *tally) totals() Totals {
	out := Totals{Seconds: t.seconds, Counters: t.counters}
	names := make([]string, 0, len(t.ops))
	for n := range t.ops {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if s, ok := series.Parse(n); ok {
			out.Series = append(out.Series, seriesSummary(s, t.ops[n], t.seconds))
			continue
		}
		out.Ops = append(out.Ops, opSummary(n, t.ops[n], t.seconds))
	}
	for k, v := range t.counters {
		if strings.HasSuffix(k, BytesSuffix) {
			out.Bytes += v
		}
	}
	if t.seconds > 0 {
		out.MBPerSec = float64(out.Bytes) / t.seconds / 1e6
	}
	return out
}

func opSummary(op string, h *hist.Histogram, seconds float64) OpSummary {
	ps := h.Percentiles([]float64{50, 90, 99, 99.9})
	s := OpSummary{Op: op, Count: h.Count(), MinMs: ms(h.Min()), MeanMs: h.Mean() / 1e6,
		P50Ms: ms(ps[0]), P90Ms: ms(ps[1]), P99Ms: ms(ps[2]), P999Ms: ms(ps[3]), MaxMs: ms(h.Max())}
	if seconds > 0 {
		s.OpsPerSec = float64(h.Count()) / seconds
	}
	return s
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func stateName(s writepathv1.RunState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "RUN_STATE_"))
}

// Cumulative merges one operation's histograms over a run's intervals, for
// a phase (all phases if empty) and a worker (merged if empty).
func Cumulative(r *writepathv1.GetRunResponse, phase, worker, op string) (*hist.Histogram, error) {
	t := newTally()
	if worker == "" {
		for _, mi := range r.GetIntervals() {
			if phase == "" || mi.GetPhase() == phase {
				if err := t.add(mi.GetOps(), nil, 0); err != nil {
					return nil, err
				}
			}
		}
	} else {
		for _, wi := range r.GetWorkerIntervals() {
			if wi.GetWorker() == worker && (phase == "" || wi.GetInterval().GetPhase() == phase) {
				if err := t.add(wi.GetInterval().GetOps(), nil, 0); err != nil {
					return nil, err
				}
			}
		}
	}
	h := t.ops[op]
	if h == nil {
		return nil, fmt.Errorf("run %s has no operation %q (has %v)", r.GetRun().GetId(), op, opNames(t.ops))
	}
	return h, nil
}

func opNames(m map[string]*hist.Histogram) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
