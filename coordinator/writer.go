package coordinator

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// writeQueue is how many merged intervals may wait for the disk before a
// merge blocks: minutes of a stalled disk at a 1 s interval. What they hold
// is bounded by phaseMerge.maxQueued: past it they carry no snapshots.
const writeQueue = 256

// maxWriteBatch bounds the jobs the writer takes at once when it is
// behind: their merged intervals go in one commit, their snapshots in
// another, two fsyncs instead of two per interval, so a writer that fell
// behind catches up. maxBatchSnapshots bounds the snapshots of one batch:
// a commit's dirty pages are held in memory until it is written (~4 KB a
// snapshot).
const (
	maxWriteBatch     = 32
	maxBatchSnapshots = 4096
)

// writeJob is one thing for a phase's writer to do, in order.
type writeJob struct {
	mi    *writepathv1.MergedInterval // published: to store
	snaps []store.WorkerSnapshot
	done  chan struct{} // closed when every earlier job is done (sync)
}

// lateJob is a worker's snapshot that arrived after its interval was
// published.
type lateJob struct {
	worker string
	iv     *writepathv1.Interval
}

// writer persists merged intervals (published as they were merged), in the
// order they were merged, then stores the interval's worker snapshots in a
// commit of their own: a fleet's snapshots are megabytes per interval
// (1,000 x 2.4 KB, a page each), and their write and fsync no longer delay
// the next merged interval's commit. A coordinator killed between the two commits keeps the
// merged interval without its snapshots; the run is then interrupted, and
// its workers' totals are read from the snapshots that were stored.
//
// Between jobs it merges the late snapshots waiting in mu.late into the
// intervals it has written, all of them together (mergeLate): one read,
// decode, encode and commit per interval. Queued one per job, a slow
// interval's hundreds of late workers cost as many commits, the queue
// filled, and sessions blocked on it under the merge lock (heartbeats
// unread, workers lost) made every later interval late too (fleetsim at
// 1,000 workers, load 20-45: 70% of the coordinator's CPU in the late
// merges, publication 23 s behind, intervals published with 0 workers).
func (m *phaseMerge) writer() {
	defer close(m.writerDone)
	var (
		dec     hist.Decoder
		written uint32 // intervals below this seq are stored
	)
	var batch []writeJob
	for {
		select {
		case job, open := <-m.jobs:
			batch, open = m.takeJobs(append(batch[:0], job), open)
			for _, j := range batch {
				if j.mi != nil {
					written = max(written, j.mi.GetSeq()+1)
				}
			}
			m.record(m.write(batch))
			m.record(m.mergeLate(&dec, m.takeLate(written)))
			for _, j := range batch {
				if j.done != nil {
					close(j.done)
				}
			}
			clear(batch)
			if !open {
				// Every late snapshot's interval was queued before the
				// close: take them all (one without a stored interval
				// is an error, not dropped).
				m.record(m.mergeLate(&dec, m.takeLate(math.MaxUint32)))
				return
			}
		case <-m.lateReady:
			m.record(m.mergeLate(&dec, m.takeLate(written)))
		}
	}
}

// takeJobs adds to batch the jobs already queued, up to maxWriteBatch jobs
// or maxBatchSnapshots snapshots (none when the writer keeps up), and
// reports whether jobs is still open.
func (m *phaseMerge) takeJobs(batch []writeJob, open bool) ([]writeJob, bool) {
	if !open {
		return batch[:0], false
	}
	snaps := len(batch[0].snaps)
	for len(batch) < maxWriteBatch && snaps < maxBatchSnapshots {
		select {
		case job, ok := <-m.jobs:
			if !ok {
				return batch, false
			}
			batch = append(batch, job)
			snaps += len(job.snaps)
		default:
			return batch, true
		}
	}
	return batch, true
}

// write stores merged intervals (one commit), tells stored, then stores
// their snapshots (one commit).
func (m *phaseMerge) write(batch []writeJob) error {
	var mis []*writepathv1.MergedInterval
	var snaps []store.WorkerSnapshot
	for _, j := range batch {
		if j.mi != nil {
			mis = append(mis, j.mi)
		}
		if len(batch) == 1 {
			snaps = j.snaps // the usual case: no copy
		} else {
			snaps = append(snaps, j.snaps...)
		}
	}
	if len(mis) == 0 {
		return nil
	}
	// The snapshots leave the bound once written or given up on.
	defer m.queued.Add(-int64(len(snaps)))
	err := m.st.PutIntervals(m.runID, m.idx, mis, nil)
	if m.stored != nil {
		m.stored(mis)
	}
	if err != nil {
		return err
	}
	if len(snaps) > 0 {
		return m.st.PutIntervals(m.runID, m.idx, nil, snaps)
	}
	return nil
}

// record logs a store error and keeps the first, which fails the phase.
func (m *phaseMerge) record(err error) {
	if err == nil {
		return
	}
	m.log.Error("store interval", "run", m.runID, "phase", m.phase, "err", err)
	if m.werr == nil {
		m.werr = err
	}
}

// takeLate removes and returns the late snapshots of intervals below
// written, in arrival order; later ones stay until their interval is
// stored (a snapshot is late only once its interval was queued, so they
// are never waited for long).
func (m *phaseMerge) takeLate(written uint32) []*lateJob {
	m.mu.Lock()
	defer m.mu.Unlock()
	var take []*lateJob
	keep := m.mu.late[:0]
	for _, j := range m.mu.late {
		if j.iv.GetSeq() < written {
			take = append(take, j)
		} else {
			keep = append(keep, j)
		}
	}
	clear(m.mu.late[len(keep):])
	m.mu.late = keep
	return take
}

// sync waits until the writer has done every job queued before it, and
// merged the late snapshots added before it.
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
