package crash

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/mysqld"
	crashv1 "github.com/writepath/writepath/proto/writepath/crash/v1"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload/oltp"
)

// flag is one of the crash kind's own command-line options; every other
// option is the OLTP load's and goes to oltp.ParseArgs unchanged.
type flag struct {
	boolean bool
	set     func(s *crashv1.Spec, v string) error
}

// flags are the crash options (dashes; underscores are accepted too).
var flags = map[string]flag{
	"rounds":         {set: func(s *crashv1.Spec, v string) error { return setUint32(&s.Rounds, v) }},
	"load-time":      {set: func(s *crashv1.Spec, v string) error { return setMS(&s.LoadTimeMs, v) }},
	"kill-at":        {set: setKillAt},
	"kill-seed":      {set: setKillSeed},
	"drop-caches":    {boolean: true, set: func(s *crashv1.Spec, v string) error { return setBool(&s.DropCaches, v) }},
	"start-timeout":  {set: func(s *crashv1.Spec, v string) error { return setMS(&s.StartTimeoutMs, v) }},
	"power-loss":     {boolean: true, set: func(s *crashv1.Spec, v string) error { return setBool(&s.PowerLoss, v) }},
	"torn-writes":    {boolean: true, set: func(s *crashv1.Spec, v string) error { return setBool(&s.TornWrites, v) }},
	"torn-seed":      {set: func(s *crashv1.Spec, v string) error { return setUint64(&s.TornSeed, v) }},
	"cut-when-dirty": {boolean: true, set: func(s *crashv1.Spec, v string) error { return setBool(&s.CutWhenDirty, v) }},
	"cut-wait":       {set: func(s *crashv1.Spec, v string) error { return setMS(&s.CutWaitMs, v) }},
	"binary":         {set: func(s *crashv1.Spec, v string) error { serverOf(s).Binary = v; return nil }},
	"dir":            {set: func(s *crashv1.Spec, v string) error { serverOf(s).Dir = v; return nil }},
	"snapshot":       {set: func(s *crashv1.Spec, v string) error { serverOf(s).Snapshot = v; return nil }},
	"set":            {set: addSetting},
}

// ParseArgs builds a Spec from `writepath crash` arguments: the crash
// options above plus any sysbench oltp_write_only option for the load
// (--tables, --table-size, --threads, --rand-type, ...). Every problem is
// reported at once. A random --kill-at range without --kill-seed gets a
// seed here, so the spec alone repeats the experiment.
func ParseArgs(args []string) (*crashv1.Spec, error) {
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

// FromArgs is ParseArgs marshalled, for workload.Meta.
func FromArgs(args []string) ([]byte, error) {
	spec, err := ParseArgs(args)
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
