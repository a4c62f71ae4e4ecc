package coordinator

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/coordinator/store"
	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// phaseMerge merges the intervals of one measured phase across its workers.
// Worker sessions call add concurrently (each decoded its histograms first,
// outside the lock); the phase's run goroutine calls tick and flush.
// Intervals are published strictly in seq order: interval k goes out when
// every worker still expected for it has reported, or when its bounded wait
// (at + (k+1)·d + wait, coordinator clock) has passed.
type phaseMerge struct {
	runID, phase string
	idx          int // the phase's index in the run, for store keys
	at           time.Time
	d, wait      time.Duration
	st           *store.Store
	// publish is told each merged interval as it is merged, in seq order,
	// under the merge lock (it must not block): before the store has it,
	// so that a commit (3 ms to over a second on a busy disk, fleetsim at
	// 1,000 workers) and the previous interval's snapshot commit are not
	// in the publication's path. stored (nil: nobody) is told by the
	// writer once they were committed or failed to be; watchers joining
	// in between get them from the watchers' list (watch.go).
	publish func(*writepathv1.MergedInterval)
	stored  func([]*writepathv1.MergedInterval)
	log     *slog.Logger
	// maxQueued bounds the snapshots handed to the writer and not yet
	// stored (queued); past it an interval's snapshots are dropped and
	// counted by dropped (nil: not counted). Set before the first add.
	maxQueued int
	dropped   func(n int)
	queued    atomic.Int64 // snapshots in jobs not yet stored

	// jobs feeds the writer goroutine (writer.go), which persists and
	// publishes in order, so no session goroutine ever waits on a disk
	// commit while holding the merge lock: heartbeats keep flowing through
	// a slow fsync.
	jobs       chan writeJob
	lateReady  chan struct{} // cap 1: mu.late has snapshots for the writer
	writerDone chan struct{}
	werr       error // first store error; written by the writer, read after writerDone

	mu struct {
		sync.Mutex
		workers map[string]*mergeWorker
		pending map[uint32]*pendingInterval
		next    uint32 // lowest seq not yet published
		running int    // workers live and not done
		closed  bool   // flushed: nothing more is merged
		accs    accPool
		// shed counts the snapshots dropped since the store fell behind
		// (0: it is not); shedTotal all the phase dropped.
		shed, shedTotal int
		// late are snapshots of published intervals, for the writer to
		// merge into the stored ones. A list, not the jobs queue: a
		// session must never wait for the disk under this lock (it did,
		// and its heartbeats went unread until it was declared lost). It
		// holds at most one snapshot per worker and published interval.
		late []*lateJob
	}
}

// accPool keeps the accumulators of published intervals for later ones:
// each is a dense counts array of the shared geometry (270 KB), one per op
// per interval, which was most of what a merge allocated. Guarded by the
// phase merge's lock.
type accPool struct{ free []*hist.Accumulator }

// maxFreeAccs bounds the pool: one interval's ops (the most an interval
// may carry).
const maxFreeAccs = 64

func (a *accPool) get() *hist.Accumulator {
	if a == nil || len(a.free) == 0 {
		return hist.NewAccumulator()
	}
	acc := a.free[len(a.free)-1]
	a.free = a.free[:len(a.free)-1]
	return acc
}

// put takes back an interval's accumulators once they are encoded.
func (a *accPool) put(accs map[string]*hist.Accumulator) {
	for _, acc := range accs {
		if len(a.free) == maxFreeAccs {
			return
		}
		acc.Reset()
		a.free = append(a.free, acc)
	}
}

// mergeWorker is what the merge knows of one placed worker.
type mergeWorker struct {
	live  bool  // not lost
	done  bool  // sent PhaseDone: reports nothing past last
	last  int64 // highest seq reported, -1 before the first
	total workerTotal
	// held is the worker's last snapshot, merged and not yet summed into
	// total: that waits until its interval is published, so that the
	// 1,000 phase-total sums (7.5% of the coordinator's CPU at 1,000
	// workers) are not in the interval's path. Its ops live in the
	// session's decoder, so the session settles it (settleTotal) before it
	// decodes its next interval.
	held *heldTotal
}

type heldTotal struct {
	iv  *writepathv1.Interval
	ops map[string]*hist.Sparse
}

// settleLocked sums the held snapshot into the worker's total.
func (w *mergeWorker) settleLocked(m *phaseMerge, name string) {
	if w.held == nil {
		return
	}
	if err := w.total.add(w.held.iv, w.held.ops); err != nil {
		// Cannot happen: add checked that it fits (fitsTotal).
		m.log.Error("worker phase total", "run", m.runID, "phase", m.phase, "worker", name, "err", err)
	}
	w.held = nil
}

// settleTotal sums the worker's held snapshot into its total: its session
// calls it before decoding the next interval into the same memory.
func (m *phaseMerge) settleTotal(worker string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.mu.workers[worker]; w != nil {
		w.settleLocked(m, worker)
	}
}

// settleAllLocked sums every held snapshot into its worker's total.
func (m *phaseMerge) settleAllLocked() {
	for name, w := range m.mu.workers {
		w.settleLocked(m, name)
	}
}

// pendingInterval accumulates interval seq until it is published.
type pendingInterval struct {
	seq       uint32
	accs      *accPool // where ops come from; nil: new ones
	ops       map[string]*hist.Accumulator
	counters  map[string]int64
	gauges    map[string]int64
	reporting map[string]bool
	snaps     []store.WorkerSnapshot
	telemetry []*writepathv1.WorkerTelemetry // per worker, never summed
	seconds   float64
}

func newPhaseMerge(runID, phase string, idx int, at time.Time, d, wait time.Duration,
	st *store.Store, workers []string, publish func(*writepathv1.MergedInterval), log *slog.Logger) *phaseMerge {
	m := &phaseMerge{runID: runID, phase: phase, idx: idx, at: at, d: d, wait: wait, st: st, publish: publish, log: log}
	m.mu.workers = make(map[string]*mergeWorker, len(workers))
	for _, w := range workers {
		m.mu.workers[w] = &mergeWorker{live: true, last: -1}
	}
	m.mu.running = len(m.mu.workers)
	m.mu.pending = map[uint32]*pendingInterval{}
	m.maxQueued = DefaultMaxQueuedSnapshots
	m.jobs, m.writerDone = make(chan writeJob, writeQueue), make(chan struct{})
	m.lateReady = make(chan struct{}, 1)
	go m.writer() // owned: flush closes jobs and waits for writerDone
	return m
}

// add merges one worker's interval, whose histograms ops were decoded by
// decodeInterval, and publishes what became complete.
func (m *phaseMerge) add(worker string, iv *writepathv1.Interval, ops map[string]*hist.Sparse, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.mu.workers[worker]
	if !ok {
		return fmt.Errorf("%w: %s is not placed in phase %s", ErrBadInterval, worker, m.phase)
	}
	if m.mu.closed {
		return fmt.Errorf("%w: %w: phase %s is over", ErrBadInterval, errStale, m.phase)
	}
	seq := iv.GetSeq()
	if int64(seq) <= w.last {
		// A worker reports its intervals in seq order on one stream.
		return fmt.Errorf("%w: seq %d from %s after seq %d: out of order", ErrBadInterval, seq, worker, w.last)
	}
	w.settleLocked(m, worker) // the previous one first: totals add in seq order
	if seq < m.mu.next {
		// Summed into the worker's total now, so a worker's total adds its
		// snapshots in seq order whichever are late.
		if err := w.total.add(iv, ops); err != nil {
			return fmt.Errorf("%w: worker %s phase total: %w", ErrBadInterval, worker, err)
		}
		w.last = int64(seq)
		// Merged into the stored interval by the writer, after it was
		// written; the histograms are decoded again there, as ops lives
		// in the session's decoder only until its next interval.
		m.mu.late = append(m.mu.late, &lateJob{worker: worker, iv: iv})
		select {
		case m.lateReady <- struct{}{}:
		default: // the writer has been told already
		}
		return nil
	}
	if seq-m.mu.next > maxSeqAhead {
		return fmt.Errorf("%w: seq %d is far ahead of %d", ErrBadInterval, seq, m.mu.next)
	}
	p := m.mu.pending[seq]
	if p == nil {
		p = newPending(seq, &m.mu.accs)
		m.mu.pending[seq] = p
	}
	if p.reporting[worker] {
		return fmt.Errorf("%w: seq %d from %s twice", ErrBadInterval, seq, worker)
	}
	if err := w.total.fits(ops); err != nil {
		return fmt.Errorf("%w: worker %s phase total: %w", ErrBadInterval, worker, err)
	}
	if err := p.merge(worker, iv, ops); err != nil {
		return err // cannot happen (see maxOpCount)
	}
	w.held = &heldTotal{iv: iv, ops: ops}
	w.last = max(w.last, int64(seq))
	m.publishReadyLocked(now)
	return nil
}

func newPending(seq uint32, accs *accPool) *pendingInterval {
	return &pendingInterval{seq: seq, accs: accs, ops: map[string]*hist.Accumulator{},
		counters: map[string]int64{}, gauges: map[string]int64{}, reporting: map[string]bool{}}
}

// merge adds one worker's snapshot: histograms exactly, counters and gauges
// as sums (a gauge such as threads running adds up across hosts).
func (p *pendingInterval) merge(worker string, iv *writepathv1.Interval, ops map[string]*hist.Sparse) error {
	for op, h := range ops {
		acc := p.ops[op]
		if acc == nil {
			acc = p.accs.get()
			p.ops[op] = acc
		}
		if err := acc.Add(h); err != nil {
			return fmt.Errorf("merge %s op %s: %w", worker, op, err)
		}
	}
	for k, v := range iv.GetCounters() {
		p.counters[k] += v
	}
	for k, v := range iv.GetGauges() {
		p.gauges[k] += v
	}
	p.reporting[worker] = true
	p.snaps = append(p.snaps, store.WorkerSnapshot{Worker: worker, Interval: iv})
	p.telemetry = addTelemetry(p.telemetry, worker, iv)
	p.seconds = max(p.seconds, iv.GetEnd().AsTime().Sub(iv.GetStart().AsTime()).Seconds())
	return nil
}

// expectedLocked lists the workers that still owe interval seq.
func (m *phaseMerge) expectedLocked(seq uint32) []string {
	var out []string
	for name, w := range m.mu.workers {
		if w.expects(seq) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// deadline is when the merge stops waiting for interval seq.
func (m *phaseMerge) deadline(seq uint32) time.Time {
	return m.at.Add(time.Duration(seq+1)*m.d + m.wait)
}

// publishReadyLocked publishes intervals in order while the next one is
// complete or past its deadline. It runs on every add, so the usual case
// (an interval still missing workers) costs O(1).
func (m *phaseMerge) publishReadyLocked(now time.Time) {
	for !m.mu.closed {
		seq := m.mu.next
		p := m.mu.pending[seq]
		if now.Before(m.deadline(seq)) {
			if p == nil || !m.completeLocked(p) {
				return
			}
		} else if p == nil && !m.anyExpectedLocked(seq) && !m.anyPendingAfterLocked(seq) {
			return // nothing more can arrive: the phase is over
		}
		if p == nil {
			p = newPending(seq, nil) // nobody reported in time: publish the hole
		}
		m.finalizeLocked(p, m.expectedLocked(seq))
		delete(m.mu.pending, seq)
		m.mu.next++
	}
}

// completeLocked reports whether every worker expected for p has reported.
// Every running worker is expected, so fewer reports than running workers
// settles it without a scan.
func (m *phaseMerge) completeLocked(p *pendingInterval) bool {
	if len(p.reporting) < m.mu.running {
		return false
	}
	for name, w := range m.mu.workers {
		if w.expects(p.seq) && !p.reporting[name] {
			return false
		}
	}
	return true
}

// expects reports whether the worker still owes interval seq.
func (w *mergeWorker) expects(seq uint32) bool {
	return w.live && (!w.done || w.last >= int64(seq))
}

func (m *phaseMerge) anyExpectedLocked(seq uint32) bool {
	for _, w := range m.mu.workers {
		if w.expects(seq) {
			return true
		}
	}
	return false
}

func (m *phaseMerge) anyPendingAfterLocked(seq uint32) bool {
	for s := range m.mu.pending {
		if s > seq {
			return true
		}
	}
	return false
}

// finalizeLocked merges p into its interval and hands it to the writer.
func (m *phaseMerge) finalizeLocked(p *pendingInterval, expected []string) {
	mi, err := m.mergedInterval(p, expected)
	m.mu.accs.put(p.ops) // encoded into mi: free for the next intervals
	if err != nil {
		// Cannot happen for histograms of the shared geometry; logged so
		// that a hole in the stored intervals is explained.
		m.log.Error("merge interval", "run", m.runID, "phase", m.phase, "seq", p.seq, "err", err)
		return
	}
	m.publish(mi)
	m.jobs <- writeJob{mi: mi, snaps: m.boundSnapsLocked(p.seq, p.snaps)}
	m.settleAllLocked() // published: the totals' sums are out of its path
}

// boundSnapsLocked returns the snapshots to store with interval seq: all
// of them while fewer than maxQueued wait for the store, none past it.
// The writer then falls behind by merged intervals only (a few KB each),
// not by a fleet's snapshots (megabytes each); the first interval shed
// and the recovery are logged, each snapshot dropped is counted.
func (m *phaseMerge) boundSnapsLocked(seq uint32, snaps []store.WorkerSnapshot) []store.WorkerSnapshot {
	if len(snaps) == 0 {
		return nil
	}
	queued := m.queued.Load()
	if queued+int64(len(snaps)) > int64(m.maxQueued) {
		if m.mu.shed == 0 {
			m.log.Warn("store behind: per-worker snapshots dropped until it catches up (merged intervals and worker totals stay exact)",
				"run", m.runID, "phase", m.phase, "seq", seq, "queued", queued, "limit", m.maxQueued)
		}
		m.mu.shed += len(snaps)
		m.mu.shedTotal += len(snaps)
		if m.dropped != nil {
			m.dropped(len(snaps))
		}
		return nil
	}
	if m.mu.shed > 0 {
		m.log.Info("store caught up: per-worker snapshots stored again", "run", m.runID, "phase", m.phase,
			"seq", seq, "dropped", m.mu.shed)
		m.mu.shed = 0
	}
	m.queued.Add(int64(len(snaps)))
	return snaps
}

func (m *phaseMerge) mergedInterval(p *pendingInterval, expected []string) (*writepathv1.MergedInterval, error) {
	hs, stats, err := encodeOps(p.ops)
	if err != nil {
		return nil, err
	}
	start := m.at.Add(time.Duration(p.seq) * m.d)
	mi := &writepathv1.MergedInterval{
		RunId: m.runID, Phase: m.phase, Seq: p.seq,
		Start: timestamppb.New(start), End: timestamppb.New(start.Add(m.d)),
		Ops: hs, Stats: stats, Counters: p.counters, Gauges: p.gauges,
		Reporting: slices.Sorted(maps.Keys(p.reporting)), Seconds: p.seconds, Telemetry: p.telemetry,
	}
	if p.seconds > 0 && p.seconds < m.d.Seconds() {
		mi.End = timestamppb.New(start.Add(time.Duration(p.seconds * float64(time.Second))))
	}
	for _, w := range expected {
		if !p.reporting[w] {
			mi.Missing = append(mi.Missing, w)
		}
	}
	return mi, nil
}

// lost stops expecting a worker; what it reported so far is kept.
func (m *phaseMerge) lost(worker string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.mu.workers[worker]; w != nil && w.live {
		if !w.done {
			m.mu.running--
		}
		w.live = false
	}
	m.publishReadyLocked(now)
}

// done records that a worker sent its last interval.
func (m *phaseMerge) done(worker string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.mu.workers[worker]; w != nil && !w.done {
		if w.live {
			m.mu.running--
		}
		w.done = true
	}
	m.publishReadyLocked(now)
}

// tick publishes intervals whose bounded wait has run out.
func (m *phaseMerge) tick(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.publishReadyLocked(now)
}

// flush publishes everything still pending, in order (the phase is over),
// waits for the writer, stores each worker's phase total, and returns how
// many intervals were published and the first store error. Nothing is
// merged after it.
func (m *phaseMerge) flush() (uint32, error) {
	m.mu.Lock()
	for len(m.mu.pending) > 0 {
		seq := m.mu.next
		p := m.mu.pending[seq]
		if p == nil {
			p = newPending(seq, nil)
		}
		m.finalizeLocked(p, m.expectedLocked(seq))
		delete(m.mu.pending, seq)
		m.mu.next++
	}
	m.settleAllLocked()
	m.mu.closed = true
	n := m.mu.next
	if m.mu.shedTotal > 0 {
		m.log.Warn("phase ended with per-worker snapshots dropped: the store fell behind", "run", m.runID,
			"phase", m.phase, "dropped", m.mu.shedTotal, "limit", m.maxQueued)
	}
	m.mu.Unlock()
	close(m.jobs)
	<-m.writerDone
	if m.werr != nil {
		return n, m.werr
	}
	return n, m.storeTotals()
}
