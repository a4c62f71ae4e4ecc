package coordinator

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// writeQueue is how many merged intervals may wait for the disk before a
// merge blocks: minutes of a stalled disk at a 1 s interval.
const writeQueue = 256

// writeJob is one thing for a phase's writer to do, in order.
type writeJob struct {
	mi    *writepathv1.MergedInterval // store, then publish
	snaps []store.WorkerSnapshot
	late  *lateJob      // merge a late snapshot into the stored interval
	done  chan struct{} // closed when every earlier job is done (sync)
}

// lateJob is a worker's snapshot that arrived after its interval was
// published.
type lateJob struct {
	worker string
	iv     *writepathv1.Interval
}

// writer persists merged intervals and publishes them, in the order they
// were merged, then stores the interval's worker snapshots in a commit of
// their own: a fleet's snapshots are megabytes per interval (1,000 x
// 2.4 KB, a page each), and their write and fsync no longer delay the
// publication. A coordinator killed between the two commits keeps the
// merged interval without its snapshots; the run is then interrupted, and
// its workers' totals are read from the snapshots that were stored.
func (m *phaseMerge) writer() {
	defer close(m.writerDone)
	var dec hist.Decoder
	for job := range m.jobs {
		var err error
		switch {
		case job.done != nil:
			close(job.done)
		case job.late != nil:
			err = m.mergeLate(&dec, job.late.worker, job.late.iv)
		default:
			if err = m.st.PutInterval(m.runID, m.idx, job.mi, nil); err == nil {
				m.publish(job.mi)
				if len(job.snaps) > 0 {
					err = m.st.PutInterval(m.runID, m.idx, nil, job.snaps)
				}
			}
		}
		if err != nil {
			m.log.Error("store interval", "run", m.runID, "phase", m.phase, "err", err)
			if m.werr == nil {
				m.werr = err
			}
		}
	}
}

// sync waits until the writer has done every job queued before it.
func (m *phaseMerge) sync() {
	done := make(chan struct{})
	m.jobs <- writeJob{done: done}
	<-done
}

// mergeLate merges a snapshot that arrived after its interval was
// published into the stored interval, so the stored result stays exact.
func (m *phaseMerge) mergeLate(dec *hist.Decoder, worker string, iv *writepathv1.Interval) error {
	mi, err := m.st.GetInterval(m.runID, m.idx, iv.GetSeq())
	if err != nil {
		return fmt.Errorf("late interval: %w", err)
	}
	if slices.Contains(mi.GetReporting(), worker) {
		return fmt.Errorf("%w: seq %d from %s twice", ErrBadInterval, iv.GetSeq(), worker)
	}
	p := newPending(iv.GetSeq(), nil)
	for _, o := range mi.GetOps() {
		h, err := dec.DecodeSparse(o.GetHdr())
		if err != nil {
			return fmt.Errorf("late interval: stored op %s: %w", o.GetOp(), err)
		}
		p.ops[o.GetOp()] = hist.NewAccumulator()
		p.ops[o.GetOp()].Add(h) // cannot overflow: a fresh accumulator
	}
	ops, err := decodeInterval(dec, iv)
	if err != nil {
		return err
	}
	if err := p.merge(worker, iv, ops); err != nil {
		return err
	}
	hs, stats, err := encodeOps(p.ops)
	if err != nil {
		return err
	}
	mi.Ops, mi.Stats, mi.Late = hs, stats, mi.GetLate()+1
	mi.Reporting = append(mi.GetReporting(), worker)
	sort.Strings(mi.Reporting)
	mi.Missing = slices.DeleteFunc(mi.GetMissing(), func(s string) bool { return s == worker })
	mi.Counters, mi.Gauges = sumMaps(mi.GetCounters(), iv.GetCounters()), sumMaps(mi.GetGauges(), iv.GetGauges())
	mi.Telemetry = addTelemetry(mi.GetTelemetry(), worker, iv)
	return m.st.PutInterval(m.runID, m.idx, mi, p.snaps)
}

func sumMaps(a, b map[string]int64) map[string]int64 {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int64{}
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}
