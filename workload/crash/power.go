package crash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/powerloss"
)

// powerCrasher cuts the power in software: the server runs on powerloss
// mounts of its directories; Crash kills it, then drops every write it had
// not made durable (keeping torn prefixes with torn writes), unmounts, and
// points the next start at the backing directories.
type powerCrasher struct {
	inst   *mysqld.Instance
	exe    string           // a binary with the powerloss-serve command
	base   []mysqld.Setting // the cell's settings, for starts off the layer
	layout powerLayout
	cfg    config
	seed   uint64 // round 1's torn seed; round n uses seed+n-1
	round  int
	live   []*powerloss.Mounted // this round's mounts, in layout order
}

var _ crasher = (*powerCrasher)(nil)

// pollEvery is how often --cut-when-dirty asks the layer what is dirty: a
// page-flush batch stays un-synced for milliseconds, a stats round trip
// costs tens of microseconds.
const pollEvery = 200 * time.Microsecond

func newPowerCrasher(inst *mysqld.Instance, exe string, cfg config, seed uint64) (*powerCrasher, error) {
	l, err := newPowerLayout(inst.Dir(), inst.DataDir(), cfg.settings)
	if err != nil {
		return nil, err
	}
	return &powerCrasher{inst: inst, exe: exe, base: cfg.settings, layout: l, cfg: cfg, seed: seed}, nil
}

// Arm mounts the layer over every directory of the layout and points the
// server's settings at the mounts.
func (p *powerCrasher) Arm(ctx context.Context, n int) error {
	p.round = n
	for _, d := range p.layout.mounts {
		if err := os.MkdirAll(d.mountpoint, 0o755); err != nil {
			return errors.Join(fmt.Errorf("power-loss mount point: %w", err), p.Disarm())
		}
		m, err := powerloss.Mount(ctx, p.exe, d.backing, d.mountpoint)
		if err != nil {
			return errors.Join(fmt.Errorf("power-loss layer over %s: %w", d.backing, err), p.Disarm())
		}
		p.live = append(p.live, m)
	}
	p.inst.SetSettings(append(append([]mysqld.Setting(nil), p.base...), p.layout.overrides...))
	return nil
}

// Settle makes what the server's start did durable, like a sync(1) once
// it is ready: the cut is meant to drop what the load did. Without it a
// start-up that renames files (MariaDB resizing its redo log renames
// ib_logfile101 to ib_logfile0) and never fsyncs the directory would have
// the rename undone by the cut, and the old redo log would come back. A
// real file system commits such a rename within seconds (ext4's journal
// commit: 5 s); the layer keeps it pending until a directory fsync.
func (p *powerCrasher) Settle(ctx context.Context) error {
	for _, m := range p.live {
		if err := m.Sync(ctx); err != nil {
			return fmt.Errorf("power-loss: sync after the start: %w", err)
		}
	}
	return nil
}

// Crash waits for dirty data files if asked, kills the server, cuts the
// power on every mount and points the settings back at the backing
// directories.
func (p *powerCrasher) Crash(ctx context.Context, rr *RoundResult) error {
	if len(p.live) == 0 {
		return errors.New("power cut: the layer is not mounted")
	}
	pc := &PowerCut{Torn: p.cfg.torn}
	rr.Cut = pc
	if p.cfg.cutWhenDirty {
		w, err := p.waitDirty(ctx)
		pc.Wait = &w
		if err != nil {
			rr.Timeline.Kill = time.Now()
			return err
		}
	}
	rr.Timeline.Kill = time.Now()
	if err := p.inst.Kill(); err != nil {
		return err
	}
	return p.cut(ctx, pc)
}

func (p *powerCrasher) cut(ctx context.Context, pc *PowerCut) error {
	opts := powerloss.CutOptions{Torn: p.cfg.torn}
	if opts.Torn {
		opts.Seed = int64(p.seed + uint64(p.round-1))
		pc.Seed = opts.Seed
	}
	var errs []error
	for i, m := range p.live {
		d := p.layout.mounts[i]
		pc.Mounts = append(pc.Mounts, d.backing)
		rep, err := m.Cut(ctx, opts)
		pc.add(d.role, rep)
		if err != nil {
			errs = append(errs, fmt.Errorf("power cut of %s: %w", d.backing, err))
		}
	}
	if pc.Torn && p.inst.Version().Flavor == mysqld.MariaDB {
		pc.inspectTorn(innodbFilesOf(p.inst.DataDir(), p.base, p.layout))
	}
	pc.trimLost()
	errs = append(errs, p.Disarm())
	return errors.Join(errs...)
}

// waitDirty polls the layer from the planned kill moment until a data
// file holds un-synced bytes, for at most cfg.cutWait.
func (p *powerCrasher) waitDirty(ctx context.Context) (DirtyWait, error) {
	var w DirtyWait
	start, exited := time.Now(), p.inst.Exited()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		w.Polls++
		for _, m := range p.live {
			st, err := m.Stats(ctx)
			if err != nil {
				return w, fmt.Errorf("cut when dirty: %w", err)
			}
			if w.Seen = dataDirty(st); len(w.Seen) > 0 {
				w.WaitedMS = msOf(time.Since(start))
				return w, nil
			}
		}
		if time.Since(start) >= p.cfg.cutWait {
			w.WaitedMS, w.TimedOut = msOf(time.Since(start)), true
			return w, nil
		}
		select {
		case <-ctx.Done():
			return w, ctx.Err()
		case <-exited:
			return w, errors.New("cut when dirty: the server exited by itself while the harness waited for dirty data pages")
		case <-tick.C:
		}
	}
}

// Disarm closes every live mount (after a cut: reaps the server; without
// one: a clean sync and unmount) and restores the cell's settings.
func (p *powerCrasher) Disarm() error {
	var errs []error
	for _, m := range p.live {
		if err := m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("power-loss layer over %s: %w", m.Backing(), err))
		}
	}
	p.live = nil
	p.inst.SetSettings(p.base)
	return errors.Join(errs...)
}
