package oltp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writepath/writepath/workload"
)

// runState is one run phase on this worker.
type runState struct {
	o       Options
	rec     *workload.Recorder
	start   time.Time
	end     time.Time // zero: no time limit
	warmEnd time.Time
	pacer   *pacer // nil: closed loop
	claimed atomic.Int64
	late    atomic.Int64
	threads []*thread
	clients []*client
	total   counters // recorder counters shared by all threads
	// hook, if not nil, takes part in every transaction (Load's callers);
	// stream is the random stream of client 0 (client i draws stream+i).
	hook   *CommitHook
	stream uint64

	// running counts clients still in their loop (after the end: those
	// in an unfinished transaction).
	running atomic.Int64
	// cum is the Recorder's view the summaries read: since the start,
	// the warm-up's end (warmMarked) or the last checkpoint.
	cum *workload.View
	// sumMu serializes summaries (checkpoints and the final one).
	sumMu          sync.Mutex
	warmMarked     bool // under sumMu
	lastCheckpoint time.Time
	// unfinished is running when --forced-shutdown (or a stop, after
	// --time) cut the run off; cut and cutAt are set then (under cutMu).
	unfinished atomic.Int64
	cutMu      sync.Mutex
	cut        bool
	cutAt      time.Time
}

// counters are the Recorder's counters, named as sysbench names them.
type counters struct {
	trx, writes, other, errors, reconnects, late *workload.Counter
}

// thread is one connection's statistics (sysbench's thread).
type thread struct {
	counts *Counts
	// trx records each transaction's latency and, with --rate, its
	// uncorrected twin: the Recorder's views are the summaries' source.
	trx  *workload.Handle
	last countSnap
	// queries times every statement (--db-debug only; nil otherwise).
	queries *queryTimes
	// began is when the transaction in progress began (UnixNano; 0 between
	// transactions), written by its client; cutBegan is its value when
	// the run was cut off (under cutMu), the unfinished event that
	// sysbench's report still counts in the thread's fairness.
	began    atomic.Int64
	cutBegan int64
}

type countSnap struct{ trx, writes, other, errors, reconnects int64 }

// Run executes the run phase: --threads connections on this worker until
// --time, --events or ctx ends it, and returns the summary. It prints
// sysbench's lines on o.Text: the start, the --report-interval lines, the
// --report-checkpoints reports; the caller prints the final report.
func Run(ctx context.Context, o Options, env workload.Env, rec *workload.Recorder) (*Summary, error) {
	if !o.DryRun && o.pre == nil { // SetUp checked both before it connected
		if err := checkSSL(ctx, o.Conn); err != nil {
			return nil, err
		}
		if err := checkTables(ctx, o); err != nil {
			return nil, err
		}
	}
	o.Text.Printf(LevelNotice, "Initializing worker threads...\n")
	s, err := newRunState(ctx, o, env, rec)
	if err != nil {
		return nil, err
	}
	defer s.cum.Close()
	defer s.close()
	for _, verb := range []string{"started", "initialized"} {
		for i := range s.threads {
			o.Text.Printf(LevelDebug, "Worker thread (#%d) %s", i, verb)
		}
	}
	o.Text.Printf(LevelNotice, "Threads started!\n")
	stopStatus := func() {}
	if !o.DryRun && !o.NoStatus {
		stopStatus = startStatus(ctx, o.Conn, rec)
	}
	defer stopStatus()
	// The clients' context ends only through cutOff or cancel, so that a
	// stop (another worker's forced shutdown) counts the transactions it
	// cuts off before the clients see it, as the forced shutdown here does.
	parent := ctx
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	s.running.Store(int64(len(s.clients)))
	stopParent := context.AfterFunc(parent, func() { s.cutOff(context.Cause(parent), cancel) })
	defer stopParent()
	stopWatch := s.watch(ctx, cancel)
	err = s.loop(ctx)
	end := time.Now()
	o.Text.Printf(LevelInfo, "Done.\n")
	checkpoints := stopWatch()
	s.flushCut()
	sum := s.summary(end, false)
	sum.Checkpoints = checkpoints
	if errors.Is(err, ErrForcedShutdown) {
		sum.ForcedShutdown, sum.Unfinished = true, int(s.unfinished.Load())
		s.addUnfinished(sum)
		return sum, err
	}
	if errors.Is(err, workload.ErrStopped) {
		// Another worker ended the phase for the run: this one ends in
		// order, its totals to now in its summary. After --time, what it
		// cut off is its share of the run's forced shutdown.
		s.cutMu.Lock()
		after := !s.end.IsZero() && !s.cutAt.Before(s.end)
		s.cutMu.Unlock()
		if n := s.unfinished.Load(); n > 0 && after {
			sum.ForcedShutdown, sum.Unfinished = true, int(n)
			s.addUnfinished(sum)
		}
		return sum, nil
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return sum, err
	}
	return sum, nil
}

// checkTables fails fast, naming the first missing table, as sysbench
// fails at thread start.
func checkTables(ctx context.Context, o Options) error {
	c, err := dial(ctx, o.Conn, true)
	if err != nil {
		return connectError(o.Conn, err)
	}
	stop := c.interruptOn(ctx)
	defer func() { stop(); c.close() }()
	names, err := c.queryStrings("SHOW TABLES LIKE 'sbtest%'")
	if err != nil {
		return fmt.Errorf("list tables in %s: %w", o.Conn.DB, err)
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	for n := 1; n <= o.Tables; n++ {
		if t := fmt.Sprintf("sbtest%d", n); !have[t] {
			return tableError(o.Conn, t, errors.New("not found"))
		}
	}
	return nil
}

// newRunState connects the run's clients and waits for env.Start. Thread
// i of worker w draws random stream w*threads+i, so workers never repeat
// each other.
func newRunState(ctx context.Context, o Options, env workload.Env, rec *workload.Recorder) (*runState, error) {
	return startRunState(ctx, o, env, rec, uint64(env.Shard.Index*o.Threads), nil)
}

// startRunState is newRunState with the first client's random stream and
// a commit hook (nil: none).
func startRunState(ctx context.Context, o Options, env workload.Env, rec *workload.Recorder, stream uint64, hook *CommitHook) (*runState, error) {
	s := &runState{o: o, rec: rec, threads: make([]*thread, o.Threads), hook: hook, stream: stream}
	s.total = counters{trx: rec.Counter("transactions"), writes: rec.Counter("writes"), other: rec.Counter("other"),
		errors: rec.Counter("errors"), reconnects: rec.Counter("reconnects"), late: rec.Counter("late")}
	if err := s.connect(ctx); err != nil {
		s.close()
		return nil, err
	}
	s.start = time.Now()
	if env.Start.After(s.start) {
		// Collect the set-up's garbage (logins, the worker's start) now,
		// while nothing is measured: once the clients wait in raw reads, a
		// collection's stop-the-world waits for the slowest answer.
		runtime.GC()
		if err := sleepCtx(ctx, time.Until(env.Start)); err != nil {
			s.close()
			return nil, err
		}
		s.start = env.Start
	}
	if o.Time > 0 {
		s.end = s.start.Add(o.Time)
	}
	s.warmEnd = s.start.Add(o.Warmup)
	if o.Rate > 0 {
		s.pacer = newPacer(s.start, o.Rate)
	}
	rec.Gauge("threads").Set(int64(o.Threads))
	s.cum = rec.NewView(s.start)
	return s, nil
}

// connect opens every thread's connection in parallel, or takes those
// the workload's SetUp opened (o.pre).
func (s *runState) connect(ctx context.Context) error {
	var sessions []*session
	switch {
	case s.o.DryRun: // --mysql-dry-run: no connection at all
		sessions = make([]*session, len(s.threads))
	case len(s.o.pre) == len(s.threads) && s.hook == nil:
		sessions, s.o.pre = s.o.pre, nil
	default:
		closeSessions(s.o.pre)
		var err error
		if sessions, err = openSessions(ctx, &s.o, len(s.threads), s.hookSQL()); err != nil {
			return err
		}
	}
	for i := range s.threads {
		t := &thread{counts: &Counts{}, trx: s.rec.Handle(trxOp)}
		if s.o.Rate > 0 {
			t.trx = s.rec.TwinHandle(trxOp, uncorrOp)
		}
		if s.o.DBDebug {
			t.queries = &queryTimes{}
		}
		s.threads[i] = t
	}
	for i, ss := range sessions {
		c, err := newClient(s, ss, i)
		if err != nil {
			closeSessions(sessions[i+1:])
			return err
		}
		s.clients = append(s.clients, c)
	}
	return nil
}

// hookSQL is the commit hook's statement, "" without one.
func (s *runState) hookSQL() string {
	if s.hook == nil {
		return ""
	}
	return s.hook.SQL
}

func (s *runState) close() {
	for _, c := range s.clients {
		c.close()
	}
	s.clients = nil
	// The handles' last values go to the intervals and views; a crash
	// round's finished clients keep no histograms.
	for _, t := range s.threads {
		if t != nil && t.trx != nil {
			s.rec.Release(t.trx)
			t.trx = nil
		}
	}
}

// loop runs every client until the end; the first fatal error stops all.
func (s *runState) loop(ctx context.Context) error {
	defer tuneRuntime(len(s.clients))()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, c := range s.clients {
		wg.Go(func() {
			defer s.running.Add(-1)
			if err := c.run(ctx); err != nil && ctx.Err() == nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// record books one transaction in the recorder: its latencies (one lock)
// and its counts' increase.
func (s *runState) record(t *thread, intended, began, done time.Time) {
	t.trx.RecordPair(int64(done.Sub(intended)), int64(done.Sub(began)))
	c := t.counts
	now := countSnap{c.Transactions.Load(), c.Writes.Load(), c.Other.Load(), c.Errors.Load(), c.Reconnects.Load()}
	s.total.trx.Add(1)
	s.total.writes.Add(now.writes - t.last.writes)
	s.total.other.Add(now.other - t.last.other)
	if now.errors != t.last.errors {
		s.total.errors.Add(now.errors - t.last.errors)
	}
	if now.reconnects != t.last.reconnects {
		s.total.reconnects.Add(now.reconnects - t.last.reconnects)
	}
	t.last = now
}

// flushCut books, after a cut-off run's clients have all returned, the
// statements of the transactions it cut off that had completed (a BEGIN
// answered before the UPDATE that blocked): sysbench counts each query as
// its answer arrives, so its report at a forced shutdown counts them too,
// while record books a transaction's counts only at its end. A statement
// in flight at the cut had no answer and counts nowhere, as in sysbench.
// An uncut run ends between transactions, where nothing is left to book.
func (s *runState) flushCut() {
	s.cutMu.Lock()
	cut := s.cut
	s.cutMu.Unlock()
	if !cut {
		return
	}
	for _, t := range s.threads {
		c := t.counts
		now := countSnap{c.Transactions.Load(), c.Writes.Load(), c.Other.Load(), c.Errors.Load(), c.Reconnects.Load()}
		s.total.writes.Add(now.writes - t.last.writes)
		s.total.other.Add(now.other - t.last.other)
		s.total.errors.Add(now.errors - t.last.errors)
		s.total.reconnects.Add(now.reconnects - t.last.reconnects)
		t.last.writes, t.last.other, t.last.errors, t.last.reconnects = now.writes, now.other, now.errors, now.reconnects
	}
}

// addUnfinished counts, in a forced shutdown's summary, each transaction
// cut off as one more event of its thread, lasting from its start to the
// cut, as sysbench's sb_report_cumulative stops the still running timers
// of its copies: the threads' events (avg/stddev) and the per-thread
// statistics include it. Not the totals, the latency section or the
// execution time's average: sysbench took those from the timers before
// it stopped them, so the average stays the finished events' time per
// thread while the deviation is around it of the stopped timers' sums
// (4 threads blocked 2 s: "1.0000/0.00" and "0.0000/2.01").
func (s *runState) addUnfinished(sum *Summary) {
	s.cutMu.Lock()
	defer s.cutMu.Unlock()
	if !s.cut || len(sum.PerThread) != len(s.threads) {
		return
	}
	events, execs := make([]float64, len(s.threads)), make([]float64, len(s.threads))
	for i, t := range s.threads {
		th := &sum.PerThread[i]
		if t.cutBegan != 0 {
			d := ms(max(s.cutAt.UnixNano()-t.cutBegan, 0))
			if th.Events == 0 {
				th.Min, th.Max = d, d
			} else {
				th.Min, th.Max = math.Min(th.Min, d), math.Max(th.Max, d)
			}
			th.Events++
			th.SumSec += d / 1e3
			th.Avg = th.SumSec * 1e3 / float64(th.Events)
		}
		events[i], execs[i] = float64(th.Events), th.SumSec
	}
	sum.EventsAvg, sum.EventsStddev = meanStddev(events)
	sum.ExecTimeStddevSec = stddevAround(sum.ExecTimeAvgSec, execs)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limitReached says, as a sysbench thread does, why a client stopped.
func (s *runState) limitReached() {
	switch {
	case s.o.Events > 0 && uint64(s.claimed.Load()) > s.o.Events:
		s.o.Text.Printf(LevelInfo, "Event limit exceeded, exiting...")
	case !s.end.IsZero() && !time.Now().Before(s.end):
		s.o.Text.Printf(LevelInfo, "Time limit exceeded, exiting...")
	}
}
