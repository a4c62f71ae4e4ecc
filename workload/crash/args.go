package crash

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/mysqld"
	crashv1 "github.com/writepath/writepath/proto/writepath/crash/v1"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload/oltp"
)

// flag is one of the crash kind's own command-line options; every other
// option is the OLTP load's and goes to oltp.ParseArgs unchanged.
type flag struct {
	name    string
	boolean bool
	arg     string // the value's form in the help ("N", "D")
	def     string // the default the help prints; "" = none
	help    string
	set     func(s *crashv1.Spec, v string) error
}

// flagTable lists the crash options in the order the help prints them
// (dashes; underscores are accepted too).
var flagTable = []flag{
	{name: "rounds", arg: "N", def: strconv.Itoa(defaultRounds), help: "crash rounds (each: restore, start, load, kill, restart, check)",
		set: func(s *crashv1.Spec, v string) error { return setUint32(&s.Rounds, v) }},
	{name: "load-time", arg: "D", def: defaultLoadTime.String(), help: "how long the OLTP load runs before the kill",
		set: func(s *crashv1.Spec, v string) error { return setMS(&s.LoadTimeMs, v) }},
	{name: "kill-at", arg: "D|D1-D2", def: "the end of --load-time", help: "when to kill: a time into the load, or a uniform random time in a range", set: setKillAt},
	{name: "kill-seed", arg: "N", def: "drawn and recorded", help: "seed of a random --kill-at range", set: setKillSeed},
	{name: "drop-caches", boolean: true, def: "off", help: "echo 1 > /proc/sys/vm/drop_caches after the kill (root)",
		set: func(s *crashv1.Spec, v string) error { return setBool(&s.DropCaches, v) }},
	{name: "start-timeout", arg: "D", def: defaultStartTimeout.String(), help: "how long a start or restart may take before the round fails",
		set: func(s *crashv1.Spec, v string) error { return setMS(&s.StartTimeoutMs, v) }},
	{name: "power-loss", boolean: true, def: "off", help: "serve the datadir through a layer that drops un-synced writes at the kill: a power cut",
		set: func(s *crashv1.Spec, v string) error { return setBool(&s.PowerLoss, v) }},
	{name: "torn-writes", boolean: true, def: "off", help: "with --power-loss: keep a random 4 KiB-aligned prefix of each un-synced write (implies --cut-when-dirty)",
		set: func(s *crashv1.Spec, v string) error { return setBool(&s.TornWrites, v) }},
	{name: "torn-seed", arg: "N", def: "drawn and recorded", help: "with --torn-writes: the tear's seed",
		set: func(s *crashv1.Spec, v string) error { return setUint64(&s.TornSeed, v) }},
	{name: "cut-when-dirty", boolean: true, def: "off", help: "with --power-loss: kill when tablespaces hold un-synced writes (at most --cut-wait after --kill-at)",
		set: func(s *crashv1.Spec, v string) error { return setBool(&s.CutWhenDirty, v) }},
	{name: "cut-wait", arg: "D", def: defaultCutWait.String(), help: "with --cut-when-dirty: how long to wait for dirty tablespaces",
		set: func(s *crashv1.Spec, v string) error { return setMS(&s.CutWaitMs, v) }},
	{name: "binary", arg: "PATH", def: "mariadbd or mysqld on PATH", help: "the managed server's binary",
		set: func(s *crashv1.Spec, v string) error { serverOf(s).Binary = v; return nil }},
	{name: "dir", arg: "DIR", def: "a temporary directory", help: "the managed server's directory (initialised and snapshotted once)",
		set: func(s *crashv1.Spec, v string) error { serverOf(s).Dir = v; return nil }},
	{name: "snapshot", arg: "DIR", def: "--dir/snapshot", help: "the prepared datadir every round starts from (taken after the first prepare, reused while it fits)",
		set: func(s *crashv1.Spec, v string) error { serverOf(s).Snapshot = v; return nil }},
	{name: "set", arg: "k=v", help: "a my.cnf setting of the managed server; repeatable", set: addSetting},
}

// flags are flagTable by name.
var flags = map[string]flag{}

func init() {
	for _, f := range flagTable {
		flags[f.name] = f
	}
}

// parseArgs builds a Spec from `writepath crash` arguments: the crash
// options above plus any sysbench oltp_write_only option for the load
// (--tables, --table-size, --threads, --rand-type, ...). Every problem is
// reported at once. A random --kill-at range without --kill-seed gets a
// seed here, so the spec alone repeats the experiment.
func parseArgs(args []string) (*crashv1.Spec, error) {
	for i, a := range args {
		if !utf8.ValidString(a) {
			// Every value ends up in a protobuf string, which must be UTF-8.
			return nil, fmt.Errorf("argument %d (%q) is not valid UTF-8", i+1, a)
		}
		if strings.IndexByte(a, 0) >= 0 {
			// No path, name or setting may hold one (the spec's check
			// would refuse it later, naming a field instead of the flag).
			return nil, fmt.Errorf("argument %d (%q) contains a NUL byte", i+1, a)
		}
	}
	spec := &crashv1.Spec{}
	var rest []string
	var errs []error
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		name = strings.ReplaceAll(strings.ToLower(name), "_", "-")
		f, ok := flags[name]
		if !strings.HasPrefix(args[i], "--") || !ok {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal && !f.boolean {
			if i+1 >= len(args) {
				errs = append(errs, fmt.Errorf("option --%s needs a value", name))
				continue
			}
			i++
			val = args[i]
		}
		if err := f.set(spec, val); err != nil {
			errs = append(errs, fmt.Errorf("--%s=%s: %w", name, val, err))
		}
	}
	// The load always connects as the managed server's root; naming it
	// also gives the spec a Connection (oltp.Resolve needs one).
	load, err := oltp.ParseArgs(append([]string{"--mysql-user=root"}, rest...))
	errs = append(errs, err)
	if load != nil {
		spec.Load = load
		mergeServer(spec, load)
	}
	if k := spec.KillAt; k != nil && k.MinMs != k.MaxMs && k.Seed == 0 {
		k.Seed = uint64(time.Now().UnixNano())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, err := resolve(spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// FromArgs is parseArgs marshalled, for workload.Meta.
func FromArgs(args []string) ([]byte, error) {
	spec, err := parseArgs(args)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(spec)
}

// mergeServer moves the oltp options' --mysqld-* server fields (if any
// were given) into the crash spec's server, where the harness reads them.
func mergeServer(spec *crashv1.Spec, load *oltpv1.Spec) {
	if load.Server == nil {
		return
	}
	s := serverOf(spec)
	if s.Binary == "" {
		s.Binary = load.Server.Binary
	}
	if s.Dir == "" {
		s.Dir = load.Server.Dir
	}
	if s.Snapshot == "" {
		s.Snapshot = load.Server.Snapshot
	}
	s.Settings = append(load.Server.Settings, s.Settings...)
	load.Server = nil
}

func serverOf(s *crashv1.Spec) *oltpv1.Server {
	if s.Server == nil {
		s.Server = &oltpv1.Server{}
	}
	return s.Server
}

func addSetting(s *crashv1.Spec, v string) error {
	st, err := mysqld.ParseSetting(v)
	if err != nil {
		return err
	}
	srv := serverOf(s)
	srv.Settings = append(srv.Settings, &oltpv1.Setting{Key: st.Key, Value: st.Value})
	return nil
}

// setKillAt reads "10s" (fixed) or "5s-15s" / "5s..15s" (uniform range).
func setKillAt(s *crashv1.Spec, v string) error {
	lo, hi, isRange := strings.Cut(v, "..")
	if !isRange {
		lo, hi, isRange = strings.Cut(v, "-")
	}
	if !isRange {
		hi = lo
	}
	var k crashv1.KillAt
	if err := setMS(&k.MinMs, lo); err != nil {
		return err
	}
	if err := setMS(&k.MaxMs, hi); err != nil {
		return err
	}
	if s.KillAt != nil {
		k.Seed = s.KillAt.Seed
	}
	s.KillAt = &k
	return nil
}

func setKillSeed(s *crashv1.Spec, v string) error {
	if s.KillAt == nil {
		s.KillAt = &crashv1.KillAt{}
	}
	return setUint64(&s.KillAt.Seed, v)
}

// setMS reads a Go duration ("20s", "1m30s") or plain seconds ("20").
func setMS(dst *uint64, v string) error {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, perr := strconv.ParseFloat(v, 64)
		if perr != nil || secs < 0 {
			return errors.New("want a duration such as 20s or 1m30s")
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return errors.New("want a positive duration")
	}
	*dst = uint64(d / time.Millisecond)
	return nil
}

func setUint32(dst *uint32, v string) error {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return errors.New("want a non-negative integer")
	}
	*dst = uint32(n)
	return nil
}

func setUint64(dst *uint64, v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return errors.New("want a non-negative integer")
	}
	*dst = n
	return nil
}

func setBool(dst *bool, v string) error {
	switch strings.ToLower(v) {
	case "", "on", "true", "yes", "1":
		*dst = true
	case "off", "false", "no", "0":
		*dst = false
	default:
		return errors.New("want on or off")
	}
	return nil
}
