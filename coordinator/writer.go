package coordinator

import (
	"errors"
	"fmt"
	"maps"
	"slices"

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

// maxLateBatch bounds the late snapshots merged into the stored intervals
// in one go: a whole fleet's interval (the snapshots commit together, as
// an interval's on time do).
const maxLateBatch = 1024

// writer persists merged intervals and publishes them, in the order they
// were merged, then stores the interval's worker snapshots in a commit of
// their own: a fleet's snapshots are megabytes per interval (1,000 x
// 2.4 KB, a page each), and their write and fsync no longer delay the
// publication. A coordinator killed between the two commits keeps the
// merged interval without its snapshots; the run is then interrupted, and
// its workers' totals are read from the snapshots that were stored.
//
// Late snapshots queued together are merged together (mergeLate): one
// read, decode, encode and commit of the stored interval for all of them.
// One at a time, a slow interval's hundreds of late workers cost as many
// commits, the queue filled, and sessions blocked on it under the merge
// lock made the next intervals late too (fleetsim at 1,000 workers, load
// 20-45: 70% of the coordinator's CPU in mergeLate, publication 23 s
// behind, every later interval published without its workers).
func (m *phaseMerge) writer() {
	defer close(m.writerDone)
	var (
		dec  hist.Decoder
		held writeJob // taken off the queue behind a batch of late ones
		hold bool
	)
	for {
		job := held
		if !hold {
			var open bool
			if job, open = <-m.jobs; !open {
				return
			}
		}
		hold = false
		var err error
		switch {
		case job.done != nil:
			close(job.done)
		case job.late != nil:
			var batch []*lateJob
			batch, held, hold = m.moreLate([]*lateJob{job.late})
			err = m.mergeLate(&dec, batch)
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

// moreLate adds the late snapshots queued behind batch's, up to
// maxLateBatch, without waiting; the first other job it takes off the
// queue is returned to be done next (hold), keeping the queue's order.
func (m *phaseMerge) moreLate(batch []*lateJob) (_ []*lateJob, held writeJob, hold bool) {
	for len(batch) < maxLateBatch {
		select {
		case job, open := <-m.jobs:
			if !open {
				return batch, writeJob{}, false // the writer's next receive sees it
			}
			if job.late == nil {
				return batch, job, true
			}
			batch = append(batch, job.late)
		default:
			return batch, writeJob{}, false
		}
	}
	return batch, writeJob{}, false
}

// sync waits until the writer has done every job queued before it.
func (m *phaseMerge) sync() {
	done := make(chan struct{})
	m.jobs <- writeJob{done: done}
	<-done
}

// mergeLate merges snapshots that arrived after their interval was
// published into the stored intervals, so the stored result stays exact:
// per interval, in the order they came. A bad snapshot is reported and
// the others are merged.
func (m *phaseMerge) mergeLate(dec *hist.Decoder, batch []*lateJob) error {
	bySeq := map[uint32][]*lateJob{}
	var seqs []uint32
	for _, j := range batch {
		seq := j.iv.GetSeq()
		if bySeq[seq] == nil {
			seqs = append(seqs, seq)
		}
		bySeq[seq] = append(bySeq[seq], j)
	}
	var errs []error
	for _, seq := range seqs {
		errs = append(errs, m.mergeLateSeq(dec, seq, bySeq[seq]))
	}
	return errors.Join(errs...)
}

// mergeLateSeq merges late snapshots of interval seq into the stored one
// and commits it with their snapshots.
func (m *phaseMerge) mergeLateSeq(dec *hist.Decoder, seq uint32, late []*lateJob) error {
	mi, err := m.st.GetInterval(m.runID, m.idx, seq)
	if err != nil {
		return fmt.Errorf("late interval: %w", err)
	}
	p := newPending(seq, nil)
	for _, o := range mi.GetOps() {
		h, err := dec.DecodeSparse(o.GetHdr())
		if err != nil {
			return fmt.Errorf("late interval: stored op %s: %w", o.GetOp(), err)
		}
		p.ops[o.GetOp()] = hist.NewAccumulator()
		p.ops[o.GetOp()].Add(h) // cannot overflow: a fresh accumulator
	}
	reporting := make(map[string]bool, len(mi.GetReporting())+len(late))
	for _, w := range mi.GetReporting() {
		reporting[w] = true
	}
	var errs []error
	merged := map[string]bool{}
	for _, j := range late {
		if reporting[j.worker] {
			errs = append(errs, fmt.Errorf("%w: seq %d from %s twice", ErrBadInterval, seq, j.worker))
			continue
		}
		// The stored ops are in p's accumulators: dec's memory is free.
		ops, err := decodeInterval(dec, j.iv)
		if err == nil {
			err = p.merge(j.worker, j.iv, ops)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reporting[j.worker], merged[j.worker] = true, true
		mi.Telemetry = addTelemetry(mi.GetTelemetry(), j.worker, j.iv)
	}
	if len(merged) == 0 {
		return errors.Join(errs...)
	}
	hs, stats, err := encodeOps(p.ops)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	mi.Ops, mi.Stats, mi.Late = hs, stats, mi.GetLate()+uint32(len(merged))
	mi.Reporting = slices.Sorted(maps.Keys(reporting))
	mi.Missing = slices.DeleteFunc(mi.GetMissing(), func(s string) bool { return merged[s] })
	mi.Counters, mi.Gauges = sumMaps(mi.GetCounters(), p.counters), sumMaps(mi.GetGauges(), p.gauges)
	return errors.Join(append(errs, m.st.PutInterval(m.runID, m.idx, mi, p.snaps))...)
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
