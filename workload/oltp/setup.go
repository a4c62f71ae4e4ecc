package oltp

import (
	"context"
	"sync"

	"github.com/writepath/writepath/workload"
)

var _ workload.SetUpper = (*Workload)(nil)

// SetUp opens the run phase's connections when the phase is assigned,
// before the worker reports it ready: the coordinator's common start then
// waits for them, as sysbench starts its clock once every thread has
// connected and prepared its statements. Opened in the start margin
// instead (Early alone), 64 connections on a busy 2-CPU host took up to
// 1.1 s against the 0.5 s margin: the first interval measured 16-33 TPS
// against a median of 1,077 (bench/oltp.md). A phase on a managed server
// (which the phase itself may start) or a dry run opens nothing here.
// What SetUp opened is Run's; if the phase never runs, ctx ends and the
// connections are closed.
func (w *Workload) SetUp(ctx context.Context, phase string, env workload.Env) error {
	if phase != PhaseRun || w.Spec.GetServer().GetDir() != "" || w.Options.DryRun {
		return nil
	}
	if _, err := CheckServer(w.Spec.GetServer(), env); err != nil {
		return err
	}
	if err := w.checkConnection(env); err != nil {
		return err
	}
	if err := w.readPasswordFile(env); err != nil {
		return err
	}
	o := w.Options
	if err := checkSSL(ctx, o.Conn); err != nil {
		return err
	}
	if err := checkTables(ctx, o); err != nil {
		return err
	}
	sessions, err := openSessions(ctx, &o, o.Threads, "")
	if err != nil {
		return err
	}
	w.mu.Lock()
	closeSessions(w.mu.pre) // a second SetUp replaces the first's
	w.mu.pre = sessions
	w.mu.Unlock()
	context.AfterFunc(ctx, func() { closeSessions(w.takeSessions()) })
	return nil
}

// takeSessions hands over what SetUp opened (nil if nothing is left).
func (w *Workload) takeSessions() []*session {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.mu.pre
	w.mu.pre = nil
	return s
}

// openSessions opens n sessions in parallel; on an error it closes those
// it opened and returns the first error (all threads fail alike).
func openSessions(ctx context.Context, o *Options, n int, hookSQL string) ([]*session, error) {
	sessions := make([]*session, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { sessions[i], errs[i] = openSession(ctx, o, hookSQL) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			closeSessions(sessions)
			return nil, err
		}
	}
	return sessions, nil
}

// closeSessions says goodbye on every open session.
func closeSessions(sessions []*session) {
	for _, ss := range sessions {
		if ss != nil {
			ss.quit()
		}
	}
}
