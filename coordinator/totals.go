package coordinator

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// workerTotal is one worker's phase so far: what its stored snapshots sum
// to. Kept sparse (a fleet has thousands), stored when the phase ends
// (WorkerTotal), so readers need not go through every snapshot and
// retention can drop the snapshots without losing each worker's numbers.
type workerTotal struct {
	ops       map[string]*hist.RangeSum
	counters  map[string]int64
	seconds   float64
	intervals uint32
}

// add sums one snapshot, whose histograms ops were decoded from it.
func (t *workerTotal) add(iv *writepathv1.Interval, ops map[string]*hist.Sparse) error {
	if t.ops == nil {
		t.ops, t.counters = map[string]*hist.RangeSum{}, map[string]int64{}
	}
	for op, h := range ops {
		s := t.ops[op]
		if s == nil {
			s = &hist.RangeSum{}
			t.ops[op] = s
		}
		if err := s.Add(h); err != nil {
			return fmt.Errorf("op %s: %w", op, err)
		}
	}
	for k, v := range iv.GetCounters() {
		t.counters[k] += v
	}
	t.seconds += iv.GetEnd().AsTime().Sub(iv.GetStart().AsTime()).Seconds()
	t.intervals++
	return nil
}

// fits reports an error if adding ops would take an op's total past
// MaxInt64 (add then fails), so that such an interval is refused whole
// before anything of it is merged.
func (t *workerTotal) fits(ops map[string]*hist.Sparse) error {
	for op, h := range ops {
		if s := t.ops[op]; s != nil && h.Count() > math.MaxInt64-s.Count() {
			return fmt.Errorf("op %s: %w: total count past MaxInt64", op, hist.ErrMergeDropped)
		}
	}
	return nil
}

// record encodes the total as stored.
func (t *workerTotal) record(worker, phase string) (*writepathv1.WorkerTotal, error) {
	out := &writepathv1.WorkerTotal{Worker: worker, Phase: phase, Counters: t.counters, Seconds: t.seconds, Intervals: t.intervals}
	for _, op := range slices.Sorted(maps.Keys(t.ops)) {
		b, err := t.ops[op].Histogram().Encode()
		if err != nil {
			return nil, fmt.Errorf("worker %s op %s: %w", worker, op, err)
		}
		out.Ops = append(out.Ops, &writepathv1.OpHistogram{Op: op, Hdr: b})
	}
	return out, nil
}

// storeTotals writes every worker's total that has a snapshot, in worker
// order. It runs once the writer has stored every snapshot, so the totals
// are exactly what the snapshots sum to, unless the store fell behind and
// snapshots were dropped (phaseMerge.maxQueued): the totals then still
// count every interval the worker sent.
func (m *phaseMerge) storeTotals() error {
	m.mu.Lock()
	names := slices.Sorted(maps.Keys(m.mu.workers))
	var out []*writepathv1.WorkerTotal
	var err error
	for _, name := range names {
		t := &m.mu.workers[name].total
		if t.intervals == 0 {
			continue
		}
		var rec *writepathv1.WorkerTotal
		if rec, err = t.record(name, m.phase); err != nil {
			break
		}
		out = append(out, rec)
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return m.st.PutWorkerTotals(m.runID, m.idx, out)
}
