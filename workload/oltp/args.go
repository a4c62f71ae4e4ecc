package oltp

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// option is one sysbench command-line option.
type option struct {
	boolean bool // takes no value ("--skip-trx"), or on/off
	set     func(s *oltpv1.Spec, v string) error
}

func uintOpt(f func(*oltpv1.Spec, uint32)) option {
	return option{set: func(s *oltpv1.Spec, v string) error {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return fmt.Errorf("want a non-negative integer")
		}
		f(s, uint32(n))
		return nil
	}}
}

func floatOpt(f func(*oltpv1.Spec, float64)) option {
	return option{set: func(s *oltpv1.Spec, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x != x {
			return fmt.Errorf("want a number")
		}
		f(s, x)
		return nil
	}}
}

func boolOpt(f func(*oltpv1.Spec, bool)) option {
	return option{boolean: true, set: func(s *oltpv1.Spec, v string) error {
		switch strings.ToLower(v) {
		case "", "on", "true", "yes", "1":
			f(s, true)
		case "off", "false", "no", "0":
			f(s, false)
		default:
			return fmt.Errorf("want on or off")
		}
		return nil
	}}
}

func strOpt(f func(*oltpv1.Spec, string)) option {
	return option{set: func(s *oltpv1.Spec, v string) error { f(s, v); return nil }}
}

func connOf(s *oltpv1.Spec) *oltpv1.Connection {
	if s.Connection == nil {
		s.Connection = &oltpv1.Connection{}
	}
	return s.Connection
}

func server(s *oltpv1.Spec) *oltpv1.Server {
	if s.Server == nil {
		s.Server = &oltpv1.Server{}
	}
	return s.Server
}

// options are sysbench's names (dashes; underscores are accepted too).
var options = map[string]option{
	"tables":               uintOpt(func(s *oltpv1.Spec, v uint32) { s.Tables = &v }),
	"table-size":           uintOpt(func(s *oltpv1.Spec, v uint32) { s.TableSize = &v }),
	"threads":              uintOpt(func(s *oltpv1.Spec, v uint32) { s.Threads = &v }),
	"time":                 uintOpt(func(s *oltpv1.Spec, v uint32) { s.TimeSeconds = &v }),
	"events":               uintOpt(func(s *oltpv1.Spec, v uint32) { s.Events = uint64(v) }),
	"warmup-time":          uintOpt(func(s *oltpv1.Spec, v uint32) { s.WarmupSeconds = v }),
	"rate":                 floatOpt(func(s *oltpv1.Spec, v float64) { s.Rate = v }),
	"tx-rate":              floatOpt(func(s *oltpv1.Spec, v float64) { s.Rate = v }),
	"report-interval":      uintOpt(func(s *oltpv1.Spec, v uint32) { s.ReportIntervalSeconds = v }),
	"percentile":           floatOpt(func(s *oltpv1.Spec, v float64) { s.Percentile = &v }),
	"rand-type":            {set: setRandType},
	"rand-seed":            {set: setSeed},
	"rand-spec-iter":       uintOpt(func(s *oltpv1.Spec, v uint32) { s.RandSpecIter = &v }),
	"rand-spec-pct":        uintOpt(func(s *oltpv1.Spec, v uint32) { s.RandSpecPct = &v }),
	"rand-spec-res":        uintOpt(func(s *oltpv1.Spec, v uint32) { s.RandSpecRes = &v }),
	"rand-pareto-h":        floatOpt(func(s *oltpv1.Spec, v float64) { s.RandParetoH = &v }),
	"auto-inc":             boolOpt(func(s *oltpv1.Spec, v bool) { s.AutoInc = &v }),
	"skip-trx":             boolOpt(func(s *oltpv1.Spec, v bool) { s.SkipTrx = v }),
	"create-secondary":     boolOpt(func(s *oltpv1.Spec, v bool) { s.CreateSecondary = &v }),
	"index-updates":        uintOpt(func(s *oltpv1.Spec, v uint32) { s.IndexUpdates = &v }),
	"non-index-updates":    uintOpt(func(s *oltpv1.Spec, v uint32) { s.NonIndexUpdates = &v }),
	"delete-inserts":       uintOpt(func(s *oltpv1.Spec, v uint32) { s.DeleteInserts = &v }),
	"mysql-storage-engine": strOpt(func(s *oltpv1.Spec, v string) { s.MysqlStorageEngine = v }),
	"mysql-host":           strOpt(func(s *oltpv1.Spec, v string) { connOf(s).Host = v }),
	"mysql-port":           uintOpt(func(s *oltpv1.Spec, v uint32) { connOf(s).Port = &v }),
	"mysql-socket":         strOpt(func(s *oltpv1.Spec, v string) { connOf(s).Socket = v }),
	"mysql-user":           strOpt(func(s *oltpv1.Spec, v string) { connOf(s).User = &v }),
	"mysql-password":       strOpt(func(s *oltpv1.Spec, v string) { connOf(s).Password = v }),
	"mysql-db":             strOpt(func(s *oltpv1.Spec, v string) { connOf(s).Db = &v }),
	"mysql-ignore-errors":  {set: setIgnore},
	"db-ps-mode":           {set: setPSMode},
	"db-driver":            {set: setDriver},
	"mysqld-binary":        strOpt(func(s *oltpv1.Spec, v string) { server(s).Binary = v }),
	// --binary and --set are the spellings campaigns and the crash kind use
	// for a managed server; both fill the same Spec.Server.
	"binary":          strOpt(func(s *oltpv1.Spec, v string) { server(s).Binary = v }),
	"mysqld-dir":      strOpt(func(s *oltpv1.Spec, v string) { server(s).Dir = v }),
	"mysqld-snapshot": strOpt(func(s *oltpv1.Spec, v string) { server(s).Snapshot = v }),
	"mysqld-set":      {set: setServerSetting},
	"set":             {set: setServerSetting},
}

var randTypes = map[string]oltpv1.RandType{
	"uniform": oltpv1.RandType_RAND_TYPE_UNIFORM, "gaussian": oltpv1.RandType_RAND_TYPE_GAUSSIAN,
	"special": oltpv1.RandType_RAND_TYPE_SPECIAL, "pareto": oltpv1.RandType_RAND_TYPE_PARETO,
}

func setRandType(s *oltpv1.Spec, v string) error {
	t, ok := randTypes[strings.ToLower(v)]
	if !ok {
		return fmt.Errorf("want uniform, gaussian, special or pareto")
	}
	s.RandType = t
	return nil
}

func setSeed(s *oltpv1.Spec, v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("want a non-negative integer")
	}
	s.RandSeed = n
	return nil
}

func setIgnore(s *oltpv1.Spec, v string) error {
	c := connOf(s)
	c.IgnoreErrorsSet = true
	c.IgnoreErrors = nil
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			c.IgnoreErrors = append(c.IgnoreErrors, e)
		}
	}
	_, err := resolveConn(c)
	return err
}

func setPSMode(s *oltpv1.Spec, v string) error {
	switch v {
	case "auto":
		s.UseTextProtocol = false
	case "disable":
		s.UseTextProtocol = true
	default:
		return fmt.Errorf("want auto or disable")
	}
	return nil
}

func setDriver(_ *oltpv1.Spec, v string) error {
	if v != "mysql" {
		return fmt.Errorf("only the mysql driver is supported")
	}
	return nil
}

func setServerSetting(s *oltpv1.Spec, v string) error {
	k, val, _ := strings.Cut(v, "=")
	if k = strings.TrimSpace(k); k == "" || strings.ContainsAny(k, " \t\n[]") || strings.Contains(val, "\n") {
		return fmt.Errorf("want key=value")
	}
	server(s).Settings = append(server(s).Settings, &oltpv1.Setting{Key: k, Value: strings.TrimSpace(val)})
	return nil
}

// ParseArgs parses sysbench-style options ("--tables=8", "--threads 16",
// "--skip-trx", "--auto_inc=off") into a Spec, reporting every problem at
// once. A leading "oltp_write_only" (sysbench's test name) is accepted.
func ParseArgs(args []string) (*oltpv1.Spec, error) {
	spec := &oltpv1.Spec{}
	var errs []error
	for i, a := range args {
		if !utf8.ValidString(a) {
			// Every value ends up in a protobuf string, which must be UTF-8.
			return nil, fmt.Errorf("argument %d (%q) is not valid UTF-8", i+1, a)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i == 0 && a == "oltp_write_only" {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name == "" {
			errs = append(errs, fmt.Errorf("argument %q: want --option=value (see sysbench oltp_write_only help)", a))
			continue
		}
		name = strings.ReplaceAll(strings.ToLower(name), "_", "-")
		opt, ok := options[name]
		if !ok {
			errs = append(errs, fmt.Errorf("unknown option --%s%s", name, suggest(name)))
			continue
		}
		if !hasVal && !opt.boolean {
			if i+1 >= len(args) {
				errs = append(errs, fmt.Errorf("option --%s needs a value", name))
				continue
			}
			i++
			val = args[i]
		}
		if err := opt.set(spec, val); err != nil {
			errs = append(errs, fmt.Errorf("--%s=%s: %w", name, val, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if spec.RandSeed == 0 {
		spec.RandSeed = freshSeed()
	}
	if _, err := Resolve(spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// freshSeed stands in for sysbench's --rand-seed=0 ("use the clock"). A
// spec is deterministic from its seed, so the seed is chosen once, here,
// and travels in the spec: every worker and a later re-run with
// --rand-seed=N draw the same streams, while two command-line runs
// differ, as two sysbench runs do. (A fixed default would replay the same
// (id, c) pairs run after run, and an UPDATE that writes the value a row
// already holds changes nothing: 0 affected rows, a different workload.)
func freshSeed() uint64 {
	var b [8]byte
	if _, err := cryptorand.Read(b[:]); err == nil {
		if s := binary.LittleEndian.Uint64(b[:]); s != 0 {
			return s
		}
	}
	return uint64(time.Now().UnixNano()) | 1
}

// FromArgs is ParseArgs marshalled, for workload.Meta.
func FromArgs(args []string) ([]byte, error) {
	spec, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(spec)
}

// suggest names a close option for a typo, e.g. " (did you mean --tables?)".
func suggest(name string) string {
	var names []string
	for n := range options {
		if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) || strings.Contains(n, name) {
			names = append(names, "--"+n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return " (did you mean " + strings.Join(names, " or ") + "?)"
}
