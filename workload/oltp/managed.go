package oltp

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/writepath/writepath/beneath"
	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

// A spec that names a managed server (--mysqld-dir, with --binary/--set or
// --mysqld-binary/--mysqld-set and optionally --mysqld-snapshot) has its
// server readied by each phase on each worker, so a campaign cell's
// settings reach the server without anything outside the kind:
//
//   - prepare: stop the server if it runs, roll the datadir back to the
//     snapshot if there is one (the tables are then already prepared, so
//     the phase creates nothing), else initialise a datadir if needed;
//     start it with the spec's settings; with a snapshot path but no
//     snapshot yet, prepare the tables, then stop and snapshot, so every
//     later round starts from identical data.
//   - run: start the server with the spec's settings on the datadir the
//     prepare left (unless it already runs with exactly those).
//   - cleanup: start it if its datadir exists, drop the tables.
//
// A phase stops the server it started when it ends, so no database
// outlives the job that needed it; --mysqld-keep leaves it running (and a
// later phase finding it running with the same settings uses it as is).
// The server is started detached either way: stopping is the phase's
// decision, not a side effect of the worker's exit. Without a managed
// server Run only connects, as before.

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
	if err := w.checkConnection(env); err != nil {
		return err
	}
	if err := w.readPasswordFile(env); err != nil {
		return err
	}
	if srv.GetDir() == "" {
		return w.runPhase(ctx, phase, env, rec)
	}
	in, want, err := openServer(ctx, srv, checked)
	if err != nil {
		return err
	}
	defer in.Close() // detached: Close leaves it to stopIfStarted
	started, err := w.managedPhase(ctx, in, want, checked, phase, env, rec)
	if started && !srv.GetKeep() {
		// Not the phase's context: a cancelled phase stops its server too.
		if serr := in.Stop(context.WithoutCancel(ctx)); serr != nil {
			err = errors.Join(err, fmt.Errorf("oltp managed server: %w", serr))
		}
	}
	return err
}

// managedPhase readies the server for phase and runs it; started says
// whether the phase started the server (which it then stops).
func (w *Workload) managedPhase(ctx context.Context, in *mysqld.Instance, want []mysqld.Setting, checked CheckedServer,
	phase string, env workload.Env, rec *workload.Recorder) (started bool, err error) {
	if phase == PhaseCleanup {
		// Cleanup drops the tables of a server whose datadir exists; a
		// fresh directory has nothing to clean.
		if !in.Running() {
			if !in.Initialized() {
				return false, nil
			}
			in.SetSettings(want)
			if err := in.Start(ctx); err != nil {
				return false, fmt.Errorf("oltp managed server %s: %w", in.Dir(), err)
			}
			started = true
		}
		if err := w.connectTo(in); err != nil {
			return started, err
		}
		return started, w.runPhase(ctx, phase, env, rec)
	}
	var snap *beneath.Path
	if checked.HasSnapshot {
		snap = &checked.Snapshot
	}
	prepared, started, err := readyServer(ctx, in, want, snap, phase)
	if err != nil {
		return started, fmt.Errorf("oltp managed server %s: %w", in.Dir(), err)
	}
	if err := w.connectTo(in); err != nil {
		return started, err
	}
	if phase == PhasePrepare && prepared {
		if env.Progress != nil {
			fmt.Fprintf(env.Progress, "oltp: datadir restored from %s; tables already prepared\n", snap)
		}
		return started, nil
	}
	if err := w.runPhase(ctx, phase, env, rec); err != nil {
		return started, err
	}
	if phase == PhasePrepare && snap != nil {
		return started, takeSnapshot(ctx, in, *snap)
	}
	return started, nil
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
	opts.Dir, opts.Binary, opts.Exec, opts.Listen = checked.Dir.String(), checked.Binary, checked.Exec, srv.GetListen()
	opts.Detach, opts.Settings = true, nil
	in, err := mysqld.Open(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("oltp managed server: %w", err)
	}
	return in, want, nil
}

// readyServer (re)starts the server with the spec's settings: always for
// prepare (from the snapshot when there is one), for run and cleanup only
// when it is not running with exactly those settings (a run phase starts
// on the datadir the prepare left; a fresh one is restored or
// initialised). It reports whether a snapshot was restored and whether it
// started the server.
func readyServer(ctx context.Context, in *mysqld.Instance, want []mysqld.Setting, snap *beneath.Path, phase string) (restored, started bool, err error) {
	if phase != PhasePrepare && in.Running() && slices.Equal(in.Settings(), want) {
		return false, false, nil
	}
	if in.Running() {
		if err := in.Stop(ctx); err != nil {
			return false, false, err
		}
	}
	if snap != nil && (phase == PhasePrepare || !in.Initialized()) {
		if ok, _ := snap.Exists(); ok {
			if err := in.Restore(ctx, snap.String()); err != nil {
				return false, false, err
			}
			restored = true
		}
	}
	if !restored && !in.Initialized() {
		if err := in.Init(ctx); err != nil {
			return false, false, err
		}
	}
	in.SetSettings(want)
	return restored, true, in.Start(ctx)
}

// takeSnapshot keeps the freshly prepared datadir for later rounds (and
// starts the server again: the phase that started it stops it).
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
		// root, with the instance's password: read here, kept in memory.
		pw, err := in.Password()
		if err != nil {
			return fmt.Errorf("oltp managed server: %w", err)
		}
		conn.User, conn.Password = &user, pw
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
