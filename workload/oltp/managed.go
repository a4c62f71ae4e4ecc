package oltp

import (
	"context"
	"fmt"
	"slices"

	"github.com/writepath/writepath/beneath"
	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

// A spec that names a managed server (--mysqld-dir, with --binary/--set or
// --mysqld-binary/--mysqld-set and optionally --mysqld-snapshot) has its
// server readied by the run's first phase on each worker, so a campaign
// cell's settings reach the server without anything outside the kind:
//
//   - prepare: stop the server if it runs, roll the datadir back to the
//     snapshot if there is one (the tables are then already prepared, so
//     the phase creates nothing), else initialise a datadir if needed;
//     start it with the spec's settings; with a snapshot path but no
//     snapshot yet, prepare the tables, then stop, snapshot and restart,
//     so every later round starts from identical data.
//   - run: when the server is not running with exactly the spec's
//     settings (a run submitted without prepare), the same readying first.
//   - cleanup: against the managed server, if it runs.
//
// The server is started detached: it outlives the phase (the next phase
// is a new Workload) and the next cell restarts it with its own settings.
// Without a managed server Run only connects, as before.

// Run executes one phase, readying a managed server first when the spec
// names one.
func (w *Workload) Run(ctx context.Context, phase string, env workload.Env, rec *workload.Recorder) error {
	// The worker's guard first (guard.go): nothing is opened, started or
	// restored for a spec naming paths or a binary the worker refuses, and
	// what it resolved is what is used.
	srv := w.Spec.GetServer()
	checked, err := CheckServer(srv, env)
	if err != nil {
		return err
	}
	if srv.GetDir() == "" {
		return w.runPhase(ctx, phase, env, rec)
	}
	in, want, err := openServer(ctx, srv, checked)
	if err != nil {
		return err
	}
	defer in.Close() // detached: leaves the server running
	if phase == PhaseCleanup {
		// Cleanup drops the tables of the server that runs; a stopped one
		// has nothing to clean (the next prepare restores the snapshot).
		if !in.Running() {
			return nil
		}
		if err := w.connectTo(in); err != nil {
			return err
		}
		return w.runPhase(ctx, phase, env, rec)
	}
	var snap *beneath.Path
	if checked.HasSnapshot {
		snap = &checked.Snapshot
	}
	prepared, err := readyServer(ctx, in, want, snap, phase)
	if err != nil {
		return fmt.Errorf("oltp managed server %s: %w", in.Dir(), err)
	}
	if err := w.connectTo(in); err != nil {
		return err
	}
	if phase == PhasePrepare && prepared {
		if env.Progress != nil {
			fmt.Fprintf(env.Progress, "oltp: datadir restored from %s; tables already prepared\n", snap)
		}
		return nil
	}
	if err := w.runPhase(ctx, phase, env, rec); err != nil {
		return err
	}
	if phase == PhasePrepare && snap != nil {
		return takeSnapshot(ctx, in, *snap)
	}
	return nil
}

// openServer opens (or adopts, when it runs) the instance in the checked
// directory with the checked binary, creating the directory beneath its
// root, and returns the settings the spec wants (the instance keeps the
// ones it runs with).
func openServer(ctx context.Context, srv *oltpv1.Server, checked CheckedServer) (*mysqld.Instance, []mysqld.Setting, error) {
	opts, err := ServerOptions(srv)
	if err != nil {
		return nil, nil, fmt.Errorf("oltp spec: %w", err)
	}
	if err := checked.Dir.MkdirAll(0o755); err != nil {
		return nil, nil, fmt.Errorf("oltp managed server: %w", err)
	}
	want := checked.Settings // as the guard resolved them
	opts.Dir, opts.Binary, opts.Exec = checked.Dir.String(), checked.Binary, checked.Exec
	opts.Detach, opts.Settings = true, nil
	in, err := mysqld.Open(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("oltp managed server: %w", err)
	}
	return in, want, nil
}

// readyServer restarts the server with the spec's settings when the phase
// is the run's first (prepare), or when a run phase finds it stopped or
// configured otherwise. It reports whether a snapshot was restored.
func readyServer(ctx context.Context, in *mysqld.Instance, want []mysqld.Setting, snap *beneath.Path, phase string) (bool, error) {
	if phase != PhasePrepare && in.Running() && slices.Equal(in.Settings(), want) {
		return false, nil
	}
	if in.Running() {
		if err := in.Stop(ctx); err != nil {
			return false, err
		}
	}
	restored := false
	if snap != nil {
		if ok, _ := snap.Exists(); ok {
			if err := in.Restore(ctx, snap.String()); err != nil {
				return false, err
			}
			restored = true
		}
	}
	if !restored && !in.Initialized() {
		if err := in.Init(ctx); err != nil {
			return false, err
		}
	}
	in.SetSettings(want)
	return restored, in.Start(ctx)
}

// takeSnapshot keeps the freshly prepared datadir for later rounds.
func takeSnapshot(ctx context.Context, in *mysqld.Instance, snap beneath.Path) error {
	if ok, _ := snap.Exists(); ok {
		return nil
	}
	if err := in.Stop(ctx); err != nil {
		return fmt.Errorf("oltp snapshot: %w", err)
	}
	if err := in.Snapshot(ctx, snap.String()); err != nil {
		return fmt.Errorf("oltp snapshot: %w", err)
	}
	return in.Start(ctx)
}

// connectTo points a spec that names no connection at the managed server
// (root over its socket, database sbtest, as the local sandbox does).
func (w *Workload) connectTo(in *mysqld.Instance) error {
	c := w.Spec.GetConnection()
	if c.GetHost() != "" || c.GetSocket() != "" {
		return nil
	}
	conn := connOf(w.Spec)
	user, db := in.User(), "sbtest"
	conn.Socket = in.Socket()
	if conn.User == nil {
		conn.User = &user
	}
	if conn.Db == nil {
		conn.Db = &db
	}
	o, err := Resolve(w.Spec)
	if err != nil {
		return fmt.Errorf("oltp spec: %w", err)
	}
	w.Options = o
	return nil
}
