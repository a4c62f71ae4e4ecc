package crash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/writepath/writepath/workload/crash/errlog"
)

// readyGrace bounds the wait for the ready line after the server already
// answered the handshake (the line is written just before, but the tail
// reads every few milliseconds).
const readyGrace = 2 * time.Second

// round runs one load/kill/restart cycle. A failure marks the round and
// leaves the server stopped, so the next round can go on.
func (h *harness) round(ctx context.Context, n int, killAt time.Duration) RoundResult {
	rr := RoundResult{Round: n, KillAtMS: msOf(killAt), logFrom: -1}
	h.rec.Gauge("round").Set(int64(n))
	if err := h.roundSteps(ctx, &rr, killAt); err != nil {
		rr.Failed, rr.Error = true, err.Error()
	}
	// Stop even when ctx is cancelled: never leave a server running.
	if err := h.inst.Stop(context.WithoutCancel(ctx)); err != nil && !rr.Failed {
		rr.Failed, rr.Error = true, fmt.Sprintf("round %d: stop after checks: %v", n, err)
	}
	// Then the layer (a failed round may have left the server on it).
	if err := h.crash.Disarm(); err != nil && !rr.Failed {
		rr.Failed, rr.Error = true, fmt.Sprintf("round %d: %v", n, err)
	}
	h.verdict(&rr)
	return rr
}

// verdict reads what the restart's error log said about the data; a
// round that never got to the restart has none.
func (h *harness) verdict(rr *RoundResult) {
	if rr.logFrom < 0 {
		return
	}
	lines, _, err := h.inst.ReadErrorLog(rr.logFrom)
	if err != nil {
		h.env.Logger().Warn("crash: read the restart's error log", "err", err)
	}
	scanVerdict(&rr.Verdict, lines)
	rr.Verdict.CheckFailed = rr.Tables != nil && !rr.TablesOK
	explainDamage(rr, lines, h.inst.DataDir(), h.opts.Conn.DB)
}

func (h *harness) roundSteps(ctx context.Context, rr *RoundResult, killAt time.Duration) error {
	n := rr.Round
	h.progress("round %d: restore snapshot, start the server", n)
	if err := h.inst.Restore(ctx, h.snapshot); err != nil {
		return fmt.Errorf("round %d: %w", n, err)
	}
	if err := h.crash.Arm(ctx, n); err != nil {
		return fmt.Errorf("round %d: %w", n, err)
	}
	if err := h.inst.Start(ctx); err != nil {
		return fmt.Errorf("round %d: first start: %w", n, err)
	}
	if err := h.crash.Settle(ctx); err != nil {
		return fmt.Errorf("round %d: %w", n, err)
	}
	if err := h.loadAndKill(ctx, rr, killAt); err != nil {
		return fmt.Errorf("round %d: %w", n, err)
	}
	if h.cfg.dropCaches {
		rr.DropCaches = dropCaches()
	}
	h.progress("round %d: killed at %v under load (%.0f tps); restarting", n, rr.Timeline.Kill.Sub(rr.loadStart).Round(time.Millisecond), rr.Load.TPS)
	if c := rr.Cut; c != nil {
		h.progress("round %d: %s", n, c.String())
	}
	if err := h.restart(ctx, rr); err != nil {
		rr.Verdict.RefusedStart = true
		return fmt.Errorf("round %d: restart after the kill: %w", n, err)
	}
	h.progress("round %d: ready %.0f ms after the recovery started, first commit %.0f ms after the kill",
		n, rr.Timeline.RecoveryMS, rr.Timeline.KillToCommitMS)
	if err := h.verify(ctx, rr); err != nil {
		return fmt.Errorf("round %d: %w", n, err)
	}
	return nil
}

// loadAndKill runs the load, samples the redo position once a second and
// kills the server at killAt after the load started.
func (h *harness) loadAndKill(ctx context.Context, rr *RoundResult, killAt time.Duration) error {
	db, err := openDB(h.inst, h.opts.Conn.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	sampler := newLSNSampler(db, h.rec)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() { defer close(sampled); sampler.run(sampleCtx) }()
	defer func() { stopSampling(); <-sampled }()

	l, err := startLoad(loadCtx, h.opts, h.rec, uint64(rr.Round)<<16)
	if err != nil {
		return err
	}
	rr.loadStart = l.start
	killErr := h.killAt(ctx, l.start.Add(killAt))
	if killErr == nil {
		killErr = h.crash.Crash(ctx, rr)
	} else {
		rr.Timeline.Kill = time.Now()
	}
	stopLoad()
	stats, loadErr := l.wait(rr.Timeline.Kill)
	rr.Load, rr.ledger = stats, l.ledger
	stopSampling()
	<-sampled
	samples, last := sampler.before(rr.Timeline.Kill)
	rr.Samples = samples
	if len(samples) > 0 {
		rr.LastSample, rr.CheckpointAge = &last, last.CheckpointAge()
	} else {
		rr.SampleError = sampler.lastErr()
	}
	return errors.Join(killErr, loadErr)
}

// killAt waits until the kill moment; the server dying on its own or ctx
// ending first is an error.
func (h *harness) killAt(ctx context.Context, at time.Time) error {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		_ = h.inst.Kill()
		return ctx.Err()
	case <-h.inst.Exited():
		return fmt.Errorf("the server exited by itself during the load; error log %s:\n  %s",
			h.inst.ErrorLogPath(), tailLines(h.inst.ErrorLogTail(20)))
	}
}

// restart starts the server after the kill while the error log is tailed
// and a probe waits for the first query and commit.
func (h *harness) restart(ctx context.Context, rr *RoundResult) error {
	db, err := openDB(h.inst, h.opts.Conn.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	pctx, stopProbe := context.WithTimeout(ctx, h.cfg.startTimeout+10*time.Second)
	defer stopProbe()
	probed := make(chan probeResult, 1)
	rr.logFrom = h.inst.ErrorLogSize()
	tail := errlog.StartTail(ctx, h.inst.ErrorLogPath(), rr.logFrom, h.inst.Port(), h.inst.Socket())
	go func() { probed <- probe(pctx, db) }()
	rr.Timeline.Spawn = time.Now()
	startErr := h.inst.Start(ctx)
	if startErr == nil {
		tail.WaitReady(ctx, readyGrace)
	}
	rec, tailErr := tail.Stop()
	rr.Recovery = rec
	if startErr != nil {
		stopProbe()
		<-probed
		return startErr // it carries the error log's tail
	}
	p := <-probed
	rr.Timeline.FirstQuery, rr.Timeline.FirstCommit = p.firstQuery, p.firstCommit
	rr.Timeline.fill(rec)
	return errors.Join(tailErr, p.err)
}

// verify checks the ledger against what was acknowledged, then runs
// CHECK TABLE on every table.
func (h *harness) verify(ctx context.Context, rr *RoundResult) error {
	db, err := openDB(h.inst, h.opts.Conn.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	if rr.ledger == nil {
		return errors.New("no ledger: the load did not start")
	}
	check, err := rr.ledger.Verify(ctx, db)
	if err != nil {
		return err
	}
	rr.Ledger = &check
	rr.Tables, err = checkTables(ctx, db)
	rr.TablesOK = err == nil && allOK(rr.Tables)
	return err
}

func allOK(tables []TableCheck) bool {
	for _, t := range tables {
		if !t.OK {
			return false
		}
	}
	return len(tables) > 0
}

// dropCaches asks the kernel to drop clean page-cache pages. Inside a
// container /proc/sys is often read-only: that is recorded, not fatal.
func dropCaches() DropCaches {
	d := DropCaches{Requested: true}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1\n"), 0); err != nil {
		d.Reason = err.Error()
		return d
	}
	d.Done = true
	return d
}

func tailLines(lines []string) string {
	if len(lines) == 0 {
		return "(error log is empty)"
	}
	out := lines[0]
	for _, l := range lines[1:] {
		out += "\n  " + l
	}
	return out
}
