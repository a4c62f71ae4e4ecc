package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/crash/ledger"
	"github.com/writepath/writepath/workload/oltp"
)

// harness runs the rounds of one crash spec against one managed instance.
type harness struct {
	cfg      config
	env      workload.Env
	rec      *workload.Recorder
	inst     *mysqld.Instance
	opts     oltp.Options
	snapshot string
	tmpDir   string  // removed by close when the harness created it
	crash    crasher // how a round crashes the server
	tornSeed uint64  // round 1's torn-writes seed (power-loss+torn)
}

func newHarness(cfg config, env workload.Env, rec *workload.Recorder) *harness {
	return &harness{cfg: cfg, env: env, rec: rec}
}

// Run prepares the instance once and runs every round. Rounds that fail
// are recorded and the rest go on; Run fails when none succeeded. The
// server is stopped when Run returns, also when ctx was cancelled.
func (h *harness) Run(ctx context.Context) (Result, error) {
	defer h.close()
	if err := h.setup(ctx); err != nil {
		return Result{}, err
	}
	kills, seed := killMoments(h.cfg)
	mode := h.cfg.mode()
	res := Result{Server: h.inst.Version().String(), Settings: settingStrings(h.cfg.settings),
		Mode: mode, Note: noteFor(mode), KillSeed: seed, TornSeed: h.tornSeed}
	h.progress("mode %s: %s", mode, res.Note)
	for i, k := range kills {
		rr := h.round(ctx, i+1, k)
		if rr.Failed {
			h.progress("round %d failed: %s", i+1, rr.Error)
		}
		res.Rounds = append(res.Rounds, rr)
		if ctx.Err() != nil {
			res.Summary = summarize(res.Rounds)
			return res, fmt.Errorf("crash rounds interrupted after round %d: %w", i+1, ctx.Err())
		}
	}
	res.Summary = summarize(res.Rounds)
	if res.Summary.Failed == len(res.Rounds) {
		return res, fmt.Errorf("every crash round failed; round 1: %s", res.Rounds[0].Error)
	}
	return res, nil
}

// killMoments draws the kill moment of every round (fixed, or uniform in
// [min, max] from the recorded seed).
func killMoments(c config) ([]time.Duration, uint64) {
	out := make([]time.Duration, c.rounds)
	seed := c.killSeed
	if c.killMin == c.killMax {
		for i := range out {
			out[i] = c.killMin
		}
		return out, 0
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x637261736821))
	span := int64(c.killMax - c.killMin)
	for i := range out {
		out[i] = c.killMin + time.Duration(rng.Int64N(span+1))
	}
	return out, seed
}

// setup creates the instance, and prepares the tables and the snapshot
// unless a snapshot of the same shape is already there.
func (h *harness) setup(ctx context.Context) error {
	dir := h.cfg.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "wp-crash-")
		if err != nil {
			return fmt.Errorf("crash: temporary directory: %w", err)
		}
		// The server's account must enter it (MkdirTemp makes it 0700);
		// what is inside is the account's or 0600.
		if err := os.Chmod(tmp, 0o711); err != nil {
			return fmt.Errorf("crash: temporary directory: %w", err)
		}
		dir, h.tmpDir = tmp, tmp
	}
	// The settings against this very datadir (a temporary one exists only
	// now): path-valued ones resolved, as the server must open them.
	settings, err := oltp.CheckSettings(h.cfg.settings, filepath.Join(dir, "data"), h.env)
	if err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	h.cfg.settings = settings
	inst, err := mysqld.New(ctx, mysqld.Options{Binary: h.cfg.binary, Exec: h.cfg.exec, Dir: dir,
		Settings: initSettings(h.cfg.settings), StartTimeout: h.cfg.startTimeout})
	if err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	h.inst = inst
	if h.crash, err = h.newCrasher(inst); err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	pw, err := inst.Password()
	if err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	if h.opts, err = h.cfg.loadOptions(inst.Socket(), pw); err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	h.snapshot = h.cfg.snapshot
	if h.snapshot == "" {
		h.snapshot = filepath.Join(dir, "snapshot")
	}
	if err := inst.Init(ctx); err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	// Every later start (prepare, rounds) runs with the cell's settings.
	inst.SetSettings(h.cfg.settings)
	if h.snapshotFits() {
		h.progress("reusing the prepared snapshot %s", h.snapshot)
		return nil
	}
	return h.prepare(ctx)
}

// newCrasher picks how rounds crash the server. The power-loss layer's
// serving process is this very executable (`powerloss-serve`): the
// writepath binary in the CLI and on workers; a test binary must answer
// that subcommand itself (see crash_test.go's TestMain).
func (h *harness) newCrasher(inst *mysqld.Instance) (crasher, error) {
	if !h.cfg.powerLoss {
		return killCrasher{inst}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("power-loss: find the serving executable: %w", err)
	}
	if h.cfg.torn {
		h.tornSeed = h.cfg.tornSeed
		for h.tornSeed == 0 {
			h.tornSeed = uint64(time.Now().UnixNano()) & (1<<62 - 1) // fits an int64 for all rounds
		}
	}
	return newPowerCrasher(inst, exe, h.cfg, h.tornSeed)
}

// snapshotShape is what a reusable snapshot must match.
type snapshotShape struct {
	Server       string
	DB           string
	Tables, Size int
	Secondary    bool
}

func (h *harness) shape() snapshotShape {
	return snapshotShape{Server: h.inst.Version().Raw, DB: h.opts.Conn.DB, Tables: h.opts.Tables,
		Size: h.opts.TableSize, Secondary: h.opts.CreateSecondary}
}

func (h *harness) shapePath() string { return h.snapshot + ".json" }

func (h *harness) snapshotFits() bool {
	b, err := os.ReadFile(h.shapePath())
	if err != nil {
		return false
	}
	var s snapshotShape
	if json.Unmarshal(b, &s) != nil || s != h.shape() {
		return false
	}
	_, err = os.Stat(filepath.Join(h.snapshot, "mysql"))
	return err == nil
}

// prepare loads the tables with the cell's settings, adds the ledger and
// probe tables, stops the server and snapshots the datadir.
func (h *harness) prepare(ctx context.Context) error {
	h.progress("preparing %d table(s) of %d rows in %s", h.opts.Tables, h.opts.TableSize, h.inst.Dir())
	if err := h.inst.Start(ctx); err != nil {
		return fmt.Errorf("crash: prepare: %w", err)
	}
	if err := h.prepareTables(ctx); err != nil {
		return fmt.Errorf("crash: prepare: %w", err)
	}
	if err := h.inst.Stop(ctx); err != nil {
		return fmt.Errorf("crash: prepare: %w", err)
	}
	_ = os.Remove(h.shapePath())
	if err := h.inst.Snapshot(ctx, h.snapshot); err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	b, _ := json.Marshal(h.shape())
	if err := os.WriteFile(h.shapePath(), b, 0o644); err != nil {
		return fmt.Errorf("crash: record snapshot shape: %w", err)
	}
	return nil
}

func (h *harness) prepareTables(ctx context.Context) error {
	admin, err := openDB(h.inst, "")
	if err != nil {
		return err
	}
	defer admin.Close()
	// A datadir left by an earlier run with other table sizes: start over.
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(h.opts.Conn.DB)); err != nil {
		return fmt.Errorf("drop database %s: %w", h.opts.Conn.DB, err)
	}
	if err := oltp.Prepare(ctx, h.opts, h.env); err != nil {
		return err
	}
	db, err := openDB(h.inst, h.opts.Conn.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := ledger.Create(ctx, db); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, probeDDL); err != nil {
		return fmt.Errorf("create %s: %w", probeTable, err)
	}
	return nil
}

// close stops the server (if running) and removes a temporary directory.
func (h *harness) close() {
	if h.inst != nil {
		if err := h.inst.Close(); err != nil {
			h.env.Logger().Warn("crash: stop the server", "err", err)
		}
	}
	if h.crash != nil { // after the server: a mount is released only once nothing uses it
		if err := h.crash.Disarm(); err != nil {
			h.env.Logger().Warn("crash: release the power-loss layer", "err", err)
		}
	}
	if h.tmpDir != "" {
		_ = os.RemoveAll(h.tmpDir)
	}
}

// progress reports a step on the terminal (local runs) and in the log.
func (h *harness) progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if h.env.Progress != nil {
		fmt.Fprintln(h.env.Progress, msg)
	}
	h.env.Logger().Info(msg)
}

// initKeys are settings fixed when a datadir is created: they must be
// given to init too. Every other setting is left out of init, so that a
// value the server rejects fails a start (with its error log) rather
// than the install script.
var initKeys = map[string]bool{"innodb_page_size": true, "innodb_data_file_path": true,
	"innodb_data_home_dir": true, "lower_case_table_names": true, "innodb_undo_tablespaces": true,
	"innodb_undo_directory": true, "innodb_log_group_home_dir": true}

func initSettings(all []mysqld.Setting) []mysqld.Setting {
	var out []mysqld.Setting
	for _, s := range all {
		if initKeys[strings.ReplaceAll(strings.ToLower(s.Key), "-", "_")] {
			out = append(out, s)
		}
	}
	return out
}

func settingStrings(s []mysqld.Setting) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.String()
	}
	return out
}

func quoteIdent(s string) string {
	b := []byte{'`'}
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			b = append(b, '`')
		}
		b = append(b, s[i])
	}
	return string(append(b, '`'))
}
