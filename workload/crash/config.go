package crash

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/mysqld"
	crashv1 "github.com/writepath/writepath/proto/writepath/crash/v1"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload/oltp"
)

// Defaults of a crash spec's unset fields.
const (
	defaultRounds       = 3
	defaultLoadTime     = 60 * time.Second
	defaultStartTimeout = 300 * time.Second
	// defaultDB is the schema holding the sbtest tables and the ledger.
	defaultDB = "sbtest"
	// defaultCutWait bounds the wait of --cut-when-dirty.
	defaultCutWait = 10 * time.Second
	// maxRounds bounds --rounds against typos (30000 instead of 3).
	maxRounds = 1000
	// maxDuration bounds every duration of a spec (load, start timeout,
	// cut wait, kill moment): a week, far past any round, far below
	// where milliseconds overflow a time.Duration.
	maxDuration = 7 * 24 * time.Hour
)

// config is a validated Spec with defaults applied: what the harness reads.
type config struct {
	rounds           int
	loadTime         time.Duration
	killMin, killMax time.Duration
	killSeed         uint64
	dropCaches       bool
	binary, dir      string
	exec             func(string) (string, error) // the guard's check where mysqld executes
	snapshot         string
	settings         []mysqld.Setting
	startTimeout     time.Duration
	load             *oltpv1.Spec // connection filled in once the server runs
	threads          int
	powerLoss, torn  bool
	tornSeed         uint64
	cutWhenDirty     bool          // delay the kill until data files hold un-synced writes
	cutWait          time.Duration // bound of that delay
}

// resolve applies defaults to spec and validates it, reporting every
// problem at once. Paths are taken as given: useChecked replaces them
// with what the guard resolved.
func resolve(spec *crashv1.Spec) (config, error) {
	c := config{
		rounds: int(spec.GetRounds()), loadTime: ms(spec.GetLoadTimeMs()),
		dropCaches: spec.GetDropCaches(), startTimeout: ms(spec.GetStartTimeoutMs()),
		binary: spec.GetServer().GetBinary(), dir: spec.GetServer().GetDir(),
		snapshot:  spec.GetServer().GetSnapshot(),
		powerLoss: spec.GetPowerLoss(), torn: spec.GetTornWrites(), tornSeed: spec.GetTornSeed(),
		cutWhenDirty: spec.GetCutWhenDirty() || spec.GetTornWrites(), cutWait: ms(spec.GetCutWaitMs()),
	}
	c.cutWait = orDur(c.cutWait, defaultCutWait)
	c.rounds = orInt(c.rounds, defaultRounds)
	c.loadTime = orDur(c.loadTime, defaultLoadTime)
	c.startTimeout = orDur(c.startTimeout, defaultStartTimeout)
	var errs []error
	errs = append(errs, c.resolveKill(spec.GetKillAt())...)
	errs = append(errs, c.resolveSettings(spec.GetServer().GetSettings())...)
	errs = append(errs, c.resolveLoad(spec.GetLoad()))
	if c.rounds > maxRounds {
		errs = append(errs, fmt.Errorf("--rounds %d: at most %d", c.rounds, maxRounds))
	}
	for _, d := range []struct {
		name string
		ms   uint64
	}{{"--load-time", spec.GetLoadTimeMs()}, {"--start-timeout", spec.GetStartTimeoutMs()}, {"--cut-wait", spec.GetCutWaitMs()},
		{"--kill-at", spec.GetKillAt().GetMinMs()}, {"--kill-at", spec.GetKillAt().GetMaxMs()}} {
		if d.ms > uint64(maxDuration/time.Millisecond) {
			errs = append(errs, fmt.Errorf("%s %dms: at most %v", d.name, d.ms, maxDuration))
		}
	}
	errs = append(errs, c.resolvePower(spec)...)
	return c, errors.Join(errs...)
}

// useChecked takes the server's directory, snapshot and binary as the
// guard resolved them (relative ones under the data dir when there is no
// guard).
func (c *config) useChecked(s oltp.CheckedServer) {
	if c.dir != "" {
		c.dir = s.Dir.String()
	}
	if s.HasSnapshot {
		c.snapshot = s.Snapshot.String()
	}
	c.binary, c.exec = s.Binary, s.Exec
}

// resolvePower checks that the power-loss options come with --power-loss.
func (c *config) resolvePower(spec *crashv1.Spec) []error {
	if c.powerLoss {
		return nil
	}
	var errs []error
	for _, o := range []struct {
		name string
		set  bool
	}{{"--torn-writes", spec.GetTornWrites()}, {"--torn-seed", spec.GetTornSeed() != 0},
		{"--cut-when-dirty", spec.GetCutWhenDirty()}, {"--cut-wait", spec.GetCutWaitMs() != 0}} {
		if o.set {
			errs = append(errs, fmt.Errorf("%s needs --power-loss", o.name))
		}
	}
	return errs
}

// mode names what a round does to the server: kill-9, power-loss or
// power-loss+torn.
func (c *config) mode() string {
	switch {
	case c.torn:
		return ModePowerLossTorn
	case c.powerLoss:
		return ModePowerLoss
	}
	return ModeKill
}

// resolveKill reads --kill-at: unset kills at the end of the load.
func (c *config) resolveKill(k *crashv1.KillAt) []error {
	c.killMin, c.killMax, c.killSeed = c.loadTime, c.loadTime, k.GetSeed()
	if k == nil {
		return nil
	}
	c.killMin, c.killMax = ms(k.GetMinMs()), ms(k.GetMaxMs())
	var errs []error
	if c.killMin <= 0 || c.killMax < c.killMin {
		errs = append(errs, fmt.Errorf("--kill-at %v..%v: want 0 < min <= max (e.g. --kill-at 10s or --kill-at 5s-15s)", c.killMin, c.killMax))
	}
	if c.killMax > c.loadTime {
		errs = append(errs, fmt.Errorf("--kill-at %v is after the end of --load-time %v: raise --load-time or lower --kill-at", c.killMax, c.loadTime))
	}
	return errs
}

func (c *config) resolveSettings(in []*oltpv1.Setting) []error {
	var errs []error
	for _, s := range in {
		set := mysqld.Setting{Key: s.GetKey(), Value: s.GetValue()}
		if err := set.Check(); err != nil {
			errs = append(errs, fmt.Errorf("--set: %w", err))
			continue
		}
		c.settings = append(c.settings, set)
	}
	return errs
}

// resolveLoad validates the OLTP options with a stand-in connection (the
// real one, the managed server's socket, is known only once it runs).
func (c *config) resolveLoad(spec *oltpv1.Spec) error {
	load := &oltpv1.Spec{}
	if spec != nil {
		load = proto.Clone(spec).(*oltpv1.Spec)
	}
	db := defaultDB
	if c := load.GetConnection(); c != nil && c.Db != nil {
		db = c.GetDb() // a raw spec may have no connection at all
	}
	root := "root"
	load.Connection = &oltpv1.Connection{Socket: "/managed.sock", User: &root, Db: &db,
		IgnoreErrors: load.GetConnection().GetIgnoreErrors(), IgnoreErrorsSet: load.GetConnection().GetIgnoreErrorsSet()}
	c.load = load
	o, err := oltp.Resolve(load)
	if err != nil {
		return fmt.Errorf("load options: %w", err)
	}
	c.threads = o.Threads
	return nil
}

// loadOptions returns the OLTP options connected to the managed server.
func (c *config) loadOptions(socket, password string) (oltp.Options, error) {
	load := proto.Clone(c.load).(*oltpv1.Spec)
	load.Connection.Socket, load.Connection.Password = socket, password
	o, err := oltp.Resolve(load)
	if err != nil {
		return o, fmt.Errorf("load options: %w", err)
	}
	return o, nil
}

func ms(v uint64) time.Duration { return time.Duration(v) * time.Millisecond }

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}
