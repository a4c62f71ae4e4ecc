package results

import (
	"context"
	"fmt"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Detail is how much of each worker Read gathers.
type Detail int

const (
	// MergedOnly reads the record and the merged intervals.
	MergedOnly Detail = iota
	// PerWorker also reads each worker's totals of every phase.
	PerWorker
)

// Read reads run id from src and reduces it in one pass. Histograms are
// decoded sparse and summed exactly; nothing of a worker's is kept but its
// totals, so a fleet's run reads in memory proportional to its workers and
// intervals, not to both at once.
func Read(ctx context.Context, src Source, id string, d Detail) (*Run, error) {
	req := &writepathv1.ReadRunRequest{RunId: id, Intervals: true}
	if d == PerWorker {
		req.Workers = writepathv1.WorkerDetail_WORKER_DETAIL_TOTALS
	}
	r := &reducer{}
	if err := src.ReadRun(ctx, req, r.add); err != nil {
		return nil, err
	}
	if r.run == nil {
		return nil, fmt.Errorf("run %s: the stream held no record", id)
	}
	r.finish()
	return r.run, nil
}

// reducer folds ReadRun items into a Run.
type reducer struct {
	run  *Run
	dec  hist.Decoder
	last *writepathv1.MergedInterval // the interval telemetry chunks continue
}

func (r *reducer) add(item *writepathv1.ReadRunResponse) error {
	if rec := item.GetRun(); rec != nil {
		r.start(rec)
		return nil
	}
	if r.run == nil {
		return fmt.Errorf("read run: %T before the record", item.GetItem())
	}
	switch {
	case item.GetInterval() != nil:
		return r.interval(item.GetInterval())
	case item.GetTelemetry() != nil:
		return r.telemetry(item.GetTelemetry())
	case item.GetWorkerTotal() != nil:
		return r.workerTotal(item.GetWorkerTotal())
	case item.GetWorkerInterval() != nil:
		return r.snapshot(item.GetWorkerInterval())
	}
	return nil // an item of a newer coordinator: nothing here reads it
}

func (r *reducer) start(rec *writepathv1.Run) {
	r.run = &Run{Record: rec, ops: map[string]opSum{}}
	for _, ph := range rec.GetPhases() {
		r.run.Phases = append(r.run.Phases, &Phase{Record: ph, Merged: newTotals(), Workers: map[string]*Totals{},
			devices: map[[2]string]*DeviceWindow{}, gauges: map[[2]string]*GaugeWindow{}})
	}
}

// interval adds a merged interval to the grid, its phase and the run.
func (r *reducer) interval(mi *writepathv1.MergedInterval) error {
	r.run.Intervals = append(r.run.Intervals, mi)
	r.last = mi
	r.dec.Reset()
	ph := r.run.Phase(mi.GetPhase())
	for _, o := range mi.GetOps() {
		s, err := r.dec.DecodeSparse(o.GetHdr())
		if err != nil {
			return fmt.Errorf("run %s phase %s interval %d op %s: %w", r.run.Record.GetId(), mi.GetPhase(), mi.GetSeq(), o.GetOp(), err)
		}
		if err := addDense(r.run.ops, o.GetOp(), s); err != nil {
			return err
		}
		if ph != nil {
			if err := addDense(ph.Merged.ops, o.GetOp(), s); err != nil {
				return err
			}
		}
	}
	if ph == nil {
		return nil
	}
	ph.Intervals++
	ph.Merged.Intervals++
	ph.Merged.addCounters(mi.GetCounters())
	ph.Merged.Seconds += mi.GetSeconds()
	for _, wt := range mi.GetTelemetry() {
		ph.addTelemetry(wt)
	}
	return nil
}

// telemetry continues the last merged interval's telemetry.
func (r *reducer) telemetry(t *writepathv1.IntervalTelemetry) error {
	if r.last == nil || r.last.GetPhase() != t.GetPhase() || r.last.GetSeq() != t.GetSeq() {
		return fmt.Errorf("run %s: telemetry of %s/%d does not follow its interval", r.run.Record.GetId(), t.GetPhase(), t.GetSeq())
	}
	r.last.Telemetry = append(r.last.Telemetry, t.GetTelemetry()...)
	if ph := r.run.Phase(t.GetPhase()); ph != nil {
		for _, wt := range t.GetTelemetry() {
			ph.addTelemetry(wt)
		}
	}
	return nil
}

// workerTotal takes a worker's stored phase total.
func (r *reducer) workerTotal(wt *writepathv1.WorkerTotal) error {
	tot := r.workerTotals(wt.GetPhase(), wt.GetWorker())
	if tot == nil {
		return nil
	}
	if err := r.addSparse(tot, wt.GetOps()); err != nil {
		return fmt.Errorf("run %s phase %s worker %s: %w", r.run.Record.GetId(), wt.GetPhase(), wt.GetWorker(), err)
	}
	tot.addCounters(wt.GetCounters())
	tot.Seconds += wt.GetSeconds()
	tot.Intervals += int(wt.GetIntervals())
	return nil
}

// snapshot adds a worker's snapshot to its phase total.
func (r *reducer) snapshot(wi *writepathv1.WorkerInterval) error {
	iv := wi.GetInterval()
	tot := r.workerTotals(iv.GetPhase(), wi.GetWorker())
	if tot == nil {
		return nil
	}
	if err := r.addSparse(tot, iv.GetOps()); err != nil {
		return fmt.Errorf("run %s phase %s worker %s interval %d: %w", r.run.Record.GetId(), iv.GetPhase(), wi.GetWorker(), iv.GetSeq(), err)
	}
	tot.addCounters(iv.GetCounters())
	tot.Seconds += iv.GetEnd().AsTime().Sub(iv.GetStart().AsTime()).Seconds()
	tot.Intervals++
	return nil
}

// workerTotals returns (creating) a worker's totals of a phase; nil for a
// phase the record does not have.
func (r *reducer) workerTotals(phase, worker string) *Totals {
	ph := r.run.Phase(phase)
	if ph == nil {
		return nil
	}
	t := ph.Workers[worker]
	if t == nil {
		t = newTotals()
		ph.Workers[worker] = t
	}
	return t
}

func (r *reducer) addSparse(t *Totals, ops []*writepathv1.OpHistogram) error {
	r.dec.Reset()
	for _, o := range ops {
		s, err := r.dec.DecodeSparse(o.GetHdr())
		if err != nil {
			return fmt.Errorf("op %s: %w", o.GetOp(), err)
		}
		sum, ok := t.ops[o.GetOp()].(*hist.RangeSum)
		if !ok {
			sum = &hist.RangeSum{}
			t.ops[o.GetOp()] = sum
		}
		if err := sum.Add(s); err != nil {
			return fmt.Errorf("op %s: %w", o.GetOp(), err)
		}
	}
	return nil
}

func addDense(m map[string]opSum, op string, s *hist.Sparse) error {
	a, ok := m[op].(*hist.Accumulator)
	if !ok {
		a = hist.NewAccumulator()
		m[op] = a
	}
	if err := a.Add(s); err != nil {
		return fmt.Errorf("op %s: %w", op, err)
	}
	return nil
}

// finish orders the telemetry windows.
func (r *reducer) finish() {
	for _, ph := range r.run.Phases {
		ph.sortTelemetry()
	}
}
