package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/workload"
)

// runPhase waits for the common start at (this host's clock), runs the
// workload (an Early one from now, to set up before at), streams interval k
// at each boundary at+(k+1)·d, then the last (short) interval and PhaseDone.
func (s *session) runPhase(p *phase, at time.Time) {
	defer s.forget(p)
	defer p.cancel(nil)
	hold, err := s.applyDisk(p)
	if err != nil {
		msg := err.Error()
		if e := s.restoreHost(p); e != "" {
			msg += "; " + e
		}
		s.done(p.runID, p.name, msg, false, nil)
		return
	}
	defer s.restoreDisk(p, hold) // a safety net: restored before PhaseDone below
	rec := workload.NewRecorder(at)
	env := s.w.cfg.env()
	env.Shard, env.Start, env.Log = p.shard, at, s.w.cfg.Log.With("run", p.runID, "phase", p.name)
	var errc chan error // the workload's result, once it runs
	if e, ok := p.wl.(workload.Early); ok && e.Early(p.name) {
		// Sets up now and measures from at. A set-up that fails is
		// reported at at, by tickUntilDone: at most the start margin late.
		errc = s.runWorkload(p, env, rec)
	}
	if !sleepUntil(p.ctx, at) {
		if errc != nil {
			<-errc // it saw the same cancellation
		}
		msg := "cancelled before the start: " + cause(p.ctx)
		if e := s.restoreHost(p); e != "" {
			msg += "; " + e
		}
		s.restoreDisk(p, hold)
		s.done(p.runID, p.name, msg, true, nil)
		return
	}
	tel, release := s.phaseTelemetry()
	defer release()
	if hold != nil {
		var releaseDisk func()
		tel, releaseDisk = diskTelemetry(tel, hold, sampledDevices(s.w.cfg.Telemetry))
		defer releaseDisk()
	}
	if tr := s.phaseTrace(p); tr != nil {
		p.trace = tr
		defer tr.Close()
		s.follow(p) // before the load starts: a running server is followed from the first write
	}
	s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_PhaseStarted{PhaseStarted: &writepathv1.PhaseStarted{
		RunId: p.runID, Phase: p.name, Started: timestamppb.Now()}}})
	if errc == nil {
		errc = s.runWorkload(p, env, rec)
	}
	err = s.tickUntilDone(p, rec, tel, at, errc)
	errText, cancelled, ends := "", false, false
	switch {
	case p.ctx.Err() != nil && !(errors.Is(context.Cause(p.ctx), workload.ErrStopped) && endedInOrder(err)):
		// Cancelled, or stopped and the workload did not end in order.
		errText, cancelled = "cancelled: "+cause(p.ctx), true
	case err != nil:
		errText, ends = err.Error(), errors.Is(err, workload.ErrEndsPhase)
	}
	var summary []byte
	if sz, ok := p.wl.(workload.Summarizer); ok && !cancelled {
		if summary, err = sz.Summary(p.name); err != nil && errText == "" {
			errText = fmt.Sprintf("summary: %v", err)
		}
	}
	// Restored before PhaseDone: the coordinator may start the next phase
	// or run on this host as soon as it hears it.
	if e := s.restoreHost(p); e != "" {
		errText = strings.TrimPrefix(errText+"; "+e, "; ")
	}
	if e := s.restoreDisk(p, hold); e != "" {
		errText = strings.TrimPrefix(errText+"; "+e, "; ")
	}
	s.sendDone(&writepathv1.PhaseDone{RunId: p.runID, Phase: p.name, Error: errText, Cancelled: cancelled,
		Summary: summary, EndsPhase: ends})
}

// endedInOrder tells whether a workload's result under a stop is its own
// end: none, or one of its own (its forced shutdown, come as the stop
// did), not the stop or a cancellation handed back.
func endedInOrder(err error) bool {
	return err == nil || !errors.Is(err, workload.ErrStopped) && !errors.Is(err, context.Canceled)
}

// applyDisk puts a phase's disk caps in force before its start.
func (s *session) applyDisk(p *phase) (DiskHold, error) {
	if p.disk == nil {
		return nil, nil
	}
	if s.w.cfg.Disks == nil {
		return nil, fmt.Errorf("disk profile %s: %w", p.disk.GetName(), ErrNoDisks)
	}
	h, err := s.w.cfg.Disks.Apply(p.disk)
	if err != nil {
		return nil, fmt.Errorf("disk profile %s: %w", p.disk.GetName(), err)
	}
	return h, nil
}

// restoreDisk removes a phase's caps; a failure is logged (the journal
// keeps the change for the worker's next start).
func (s *session) restoreDisk(p *phase, h DiskHold) string {
	if h == nil {
		return ""
	}
	if err := h.Restore(); err != nil {
		s.w.cfg.Log.Error("disk profile not restored", "run", p.runID, "phase", p.name, "err", err)
		return "disk profile not restored: " + err.Error()
	}
	return ""
}

// runWorkload runs the phase's workload on a goroutine of its own and
// returns where its result will be; runPhase receives it, however the
// phase ends.
func (s *session) runWorkload(p *phase, env workload.Env, rec *workload.Recorder) chan error {
	errc := make(chan error, 1)
	go func() { errc <- p.wl.Run(p.ctx, p.name, env, rec) }() // owned: runPhase receives from errc
	return errc
}

// tickUntilDone sends an interval at every boundary until the workload
// returns, then the final interval; it returns the workload's error.
func (s *session) tickUntilDone(p *phase, rec *workload.Recorder, tel Telemetry, at time.Time, errc <-chan error) error {
	var seq uint32
	poll, stopPoll := s.followPoll(p)
	defer stopPoll()
	for {
		next := at.Add(time.Duration(seq+1) * p.d)
		t := time.NewTimer(time.Until(next))
		select {
		case <-poll:
			t.Stop()
			if s.follow(p) {
				stopPoll()
				poll = nil
			}
		case <-t.C:
			if p.measured {
				snap := rec.Tick(next)
				s.interval(p, seq, snap, tel)
				rec.Recycle(snap) // encoded and sent: its histograms serve the next Tick
			}
			seq++
		case err := <-errc:
			t.Stop()
			if p.measured {
				s.interval(p, seq, rec.Tick(time.Now()), tel)
			}
			if err == nil {
				err = rec.Err() // a dropped merge: the intervals miss values
			}
			return err
		}
	}
}

// interval encodes and sends one snapshot: in the sparse wire encoding
// when the coordinator asked for it (cheaper here too: no deflate), else
// HDR's V2. Encoding cannot fail for a histogram of the shared geometry;
// if it does, the op is skipped and logged rather than the whole interval
// lost.
func (s *session) interval(p *phase, seq uint32, snap workload.Snapshot, tel Telemetry) {
	traced, counters := s.traceInterval(p, p.trace, snap.Counters)
	iv := &writepathv1.Interval{RunId: p.runID, Phase: p.name, Seq: seq,
		Start: timestamppb.New(snap.Start), End: timestamppb.New(snap.End),
		Counters: counters, Gauges: snap.Gauges, Telemetry: telemetryProto(tel, snap.End)}
	for _, op := range snap.OpNames() {
		b, err := encodeOp(snap.Ops[op], p.sparse)
		if err != nil {
			s.w.cfg.Log.Error("encode histogram", "run", iv.GetRunId(), "phase", iv.GetPhase(), "op", op, "err", err)
			continue
		}
		iv.Ops = append(iv.Ops, &writepathv1.OpHistogram{Op: op, Hdr: b})
	}
	iv.Ops = appendTraced(iv.Ops, snap.Ops, traced)
	if err := s.send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Interval{Interval: iv}}); err != nil {
		s.w.cfg.Log.Warn("send interval", "run", iv.GetRunId(), "phase", iv.GetPhase(), "seq", seq, "err", err)
	}
}

func encodeOp(h *hist.Histogram, sparse bool) ([]byte, error) {
	if sparse {
		return h.EncodeSparse(), nil
	}
	return h.Encode()
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	return sleep(ctx, d)
}

func cause(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil {
		return c.Error()
	}
	return "cancelled"
}
