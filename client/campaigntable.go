package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/writepath/writepath/campaign"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// PrimaryOps names, in order of preference, the operation a campaign
// counts: a transaction where the kind has one (oltp, crash), else the
// I/Os, reads and writes together (fio).
var PrimaryOps = [][]string{{"trx"}, {"write", "read"}}

// CampaignIntervals converts a run's merged intervals of its first
// measured phase into campaign intervals: offsets from that phase's common
// start, the primary operation's count and merged histogram.
func CampaignIntervals(r *results.Run) ([]campaign.Interval, error) {
	ph := measuredPhase(r.Record)
	if ph == nil {
		return nil, fmt.Errorf("run %s: no measured phase", r.Record.GetId())
	}
	at := ph.GetAt().AsTime()
	ops := primaryOps(r.Intervals, ph.GetName())
	var out []campaign.Interval
	for _, mi := range r.Intervals {
		if mi.GetPhase() != ph.GetName() {
			continue
		}
		h, err := results.IntervalHistogram(mi, func(op string) bool { return ops[op] })
		if err != nil {
			return nil, fmt.Errorf("run %s interval %d: %w", r.Record.GetId(), mi.GetSeq(), err)
		}
		iv := campaign.Interval{Start: mi.GetStart().AsTime().Sub(at), End: mi.GetEnd().AsTime().Sub(at),
			Ops: h.Count(), Latency: h}
		for op := range ops {
			iv.Bytes += mi.GetCounters()[op+"_"+BytesSuffix]
		}
		if hasSync(mi) {
			if iv.Sync, err = results.IntervalHistogram(mi, isSync); err != nil {
				return nil, fmt.Errorf("run %s interval %d: %w", r.Record.GetId(), mi.GetSeq(), err)
			}
		}
		if dev := deviceWrites(mi.GetOps()); len(dev) > 0 {
			if iv.DeviceWrite, err = results.IntervalHistogram(mi, func(op string) bool { return dev[op] }); err != nil {
				return nil, fmt.Errorf("run %s interval %d: %w", r.Record.GetId(), mi.GetSeq(), err)
			}
		}
		out = append(out, iv)
	}
	return out, nil
}

// isSync reports whether op is an I/O kind's sync (fio's "sync" covers
// fsync and fdatasync).
func isSync(op string) bool { return op == "sync" || op == "fsync" || op == "fdatasync" }

func hasSync(mi *writepathv1.MergedInterval) bool {
	for _, o := range mi.GetOps() {
		if isSync(o.GetOp()) {
			return true
		}
	}
	return false
}

// deviceWrites names an interval's block write-latency series (every
// traced device's block.<dev>.write.d2c).
func deviceWrites(ops []*writepathv1.OpHistogram) map[string]bool {
	var want map[string]bool
	for _, o := range ops {
		if s, ok := series.Parse(o.GetOp()); ok && s.Prefix == "block" && s.Op == "write" && s.Metric == series.D2C {
			if want == nil {
				want = map[string]bool{}
			}
			want[o.GetOp()] = true
		}
	}
	return want
}

func measuredPhase(run *writepathv1.Run) *writepathv1.PhaseRecord {
	for _, ph := range run.GetPhases() {
		if ph.GetMeasured() {
			return ph
		}
	}
	return nil
}

// primaryOps picks the first set of PrimaryOps that the phase recorded.
func primaryOps(ivs []*writepathv1.MergedInterval, phase string) map[string]bool {
	seen := map[string]bool{}
	for _, mi := range ivs {
		if mi.GetPhase() == phase {
			for _, o := range mi.GetOps() {
				seen[o.GetOp()] = true
			}
		}
	}
	for _, set := range PrimaryOps {
		want := map[string]bool{}
		for _, o := range set {
			if seen[o] {
				want[o] = true
			}
		}
		if len(want) > 0 {
			return want
		}
	}
	return nil
}

// CampaignResult is a campaign reduced to its table.
type CampaignResult struct {
	Spec  *campaign.Spec
	Table campaign.Table
	Unit  string
	// Notes name the completed runs that did not count (no interval in
	// the window), so a thin cell is explained.
	Notes []string
}

// TableOptions are what a campaign table adds beyond the intervals.
type TableOptions struct {
	// Kind is what the campaign's kind declares (its figures, columns
	// and unit); the zero Kind: none of its own.
	Kind Kind
	// Columns replace the spec's telemetry columns when set
	// (TelemetryColumns names them).
	Columns []string
}

// BuildCampaignTable reads every completed run of a campaign, applies the
// spec's window to its stored intervals and builds the result table.
func BuildCampaignTable(ctx context.Context, src CampaignSource, rec *writepathv1.Campaign) (*CampaignResult, error) {
	return BuildCampaignTableWith(ctx, src, rec, TableOptions{})
}

// BuildCampaignTableWith is BuildCampaignTable with the kind's figures,
// columns and unit and the telemetry columns.
func BuildCampaignTableWith(ctx context.Context, src CampaignSource, rec *writepathv1.Campaign, o TableOptions) (*CampaignResult, error) {
	plan := rec.GetPlan()
	spec, err := campaign.Parse(plan.GetSpecFile(), []byte(plan.GetSpecText()))
	if err != nil {
		return nil, fmt.Errorf("campaign %s: stored spec: %w", rec.GetId(), err)
	}
	if o.Columns != nil {
		spec.Columns = o.Columns
	}
	if err := CheckColumns(spec.Columns); err != nil {
		return nil, fmt.Errorf("campaign %s: columns: %w", rec.GetId(), err)
	}
	res := &CampaignResult{Spec: spec, Unit: plan.GetAggregation().GetUnit()}
	if res.Unit == "" {
		res.Unit = o.Kind.unit()
	}
	stats := map[campaign.Key][]campaign.RoundStat{}
	runs := map[string][]*writepathv1.Run{} // by cell label, for host knobs
	for i, cr := range rec.GetRuns() {
		if !cr.GetDone() {
			continue
		}
		p := plan.GetRuns()[i]
		st, run, err := roundStat(ctx, src, spec, o, cr.GetRunId())
		if run != nil {
			runs[p.GetCell()] = append(runs[p.GetCell()], run)
		}
		if errors.Is(err, campaign.ErrEmptyWindow) {
			res.Notes = append(res.Notes, fmt.Sprintf("run %s (%s on %s, round %d): %v", cr.GetRunId(), p.GetCell(), p.GetGroup(), p.GetRound(), err))
			continue
		}
		if errors.Is(err, errFigures) {
			// The run counts; only its kind's figures are missing.
			res.Notes = append(res.Notes, fmt.Sprintf("run %s (%s on %s, round %d): %v", cr.GetRunId(), p.GetCell(), p.GetGroup(), p.GetRound(), err))
		} else if err != nil {
			return nil, err
		}
		k := campaign.Key{Cell: p.GetCell(), Group: p.GetGroup()}
		stats[k] = append(stats[k], st)
	}
	res.Table = spec.BuildTable(stats)
	res.Table.KindColumns = o.Kind.Columns
	unitColumns(&res.Table)
	for i := range res.Table.Rows {
		res.Table.Rows[i].Host = HostLabel(runs[res.Table.Rows[i].Label])
	}
	return res, nil
}

// roundStat reduces one run to the window; it also returns the run's
// record when it could be read.
func roundStat(ctx context.Context, src CampaignSource, spec *campaign.Spec, o TableOptions, id string) (campaign.RoundStat, *writepathv1.Run, error) {
	r, err := results.Read(ctx, src, id, results.MergedOnly)
	if err != nil {
		return campaign.RoundStat{}, nil, err
	}
	ivs, err := CampaignIntervals(r)
	if err != nil {
		return campaign.RoundStat{}, r.Record, err
	}
	st, err := spec.Window.Stat(ivs)
	if err != nil {
		return st, r.Record, fmt.Errorf("run %s: %w", id, err)
	}
	if st.Figures, err = runFigures(r, spec, o); err != nil {
		return st, r.Record, fmt.Errorf("%w: %w", errFigures, err)
	}
	return st, r.Record, nil
}

// errFigures marks a run whose kind's figures could not be read (a
// summary cut short): its throughput and latency still count.
var errFigures = errors.New("no figures of its kind")
