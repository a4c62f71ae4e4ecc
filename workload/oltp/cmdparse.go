package oltp

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/writepath/writepath/mysqld"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// CommandLine is a sysbench command line (`sysbench [options]... testname
// command`), parsed and checked in sysbench 1.0.20's order.
type CommandLine struct {
	// Test is the test name or script path as given; Command is prepare,
	// prewarm, run, cleanup or help.
	Test, Command string
	// Help and Version are --help and --version: print, exit 0.
	Help, Version bool
	// Notices are the warnings sysbench prints before its banner
	// ("WARNING: --max-time is deprecated, use --time instead").
	Notices []string
	// Spec is what the command runs (nil for help).
	Spec *oltpv1.Spec
	// Seed is --rand-seed as given (0: none; the spec then has a fresh
	// one, and sysbench's "from current time" line is printed).
	Seed uint64
	// Output holds the options that change only the text.
	Output Output
}

// Output is the options of sysbench's logger and report: they change what
// is printed, never a statement.
type Output struct {
	// Verbosity is --verbosity (5 with --debug): messages above it are
	// not printed (0 fatal, 2 warning, 3 notice, 4 info, 5 debug).
	Verbosity int
	// Histogram is --histogram: the latency histogram before the report.
	Histogram bool
	// Debug is --debug: "Debug mode enabled." and per-thread statistics.
	Debug bool
	// Validate is --validate: "Validation checks: on." (oltp_write_only
	// has nothing to validate, in sysbench too).
	Validate bool
	// DBDebug is --db-debug: query execution statistics at debug level.
	DBDebug bool
	// Notes shows writepath's own notes (LevelNote), which sysbench's
	// output has no place for.
	Notes bool
}

// Exit ends a command early, as sysbench would: Stdout and Stderr are
// printed (Stdout after the banner when Banner is set) and the process
// exits with Code.
type Exit struct {
	Banner bool
	// RunHeader: sysbench's run prints its options and "Initializing
	// worker threads..." before Stdout (its threads fail as they start).
	RunHeader bool
	// Stdin: the test is a Lua script on standard input, which writepath
	// runs only when it is empty (it does nothing, as sysbench does).
	Stdin          bool
	Stdout, Stderr string
	Code           int
}

func (e *Exit) Error() string {
	return strings.TrimSpace(e.Stdout + e.Stderr)
}

func fatalExit(banner bool, format string, args ...any) *Exit {
	return &Exit{Banner: banner, Stdout: "FATAL: " + fmt.Sprintf(format, args...) + "\n", Code: 1}
}

// Commands are the commands oltp_write_only implements.
var Commands = []string{"prepare", "prewarm", "run", "cleanup", "help"}

// ParseCommandLine parses args as sysbench 1.0.20 parses them for
// oltp_write_only, failing where and as sysbench fails: the same wording,
// the same stream, before or after the banner, the same exit status
// (*Exit). Options writepath cannot honour are refused with the reason.
func ParseCommandLine(args []string) (*CommandLine, *Exit) {
	cl := &CommandLine{}
	vs := newValues()
	rest, ex := cl.general(vs, args)
	if ex != nil || cl.Help || cl.Version {
		return cl, ex
	}
	if ex := cl.initOptions(vs); ex != nil {
		return cl, ex
	}
	// The banner is printed here.
	if ex := cl.test(vs, rest); ex != nil {
		return cl, ex
	}
	if cl.Command == "help" {
		return cl, nil
	}
	spec, errs := specFrom(vs)
	if ex := driverExit(cl, spec, errs); ex != nil {
		return cl, ex
	}
	if len(errs) == 0 {
		cl.Seed = spec.RandSeed
		spec.RandSeed = seedOf(spec.RandSeed)
		if _, err := Resolve(spec); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		var b strings.Builder
		for _, err := range errs {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(&b, "FATAL: %s\n", line)
			}
		}
		return cl, &Exit{Banner: true, Stdout: b.String(), Code: 1}
	}
	cl.Spec = spec
	return cl, nil
}

// general is parse_general_arguments: the test name and command, and
// every option of sysbench itself (those of the test are left in rest).
func (cl *CommandLine) general(vs *values, args []string) (rest []string, ex *Exit) {
	var stderr strings.Builder
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			switch {
			case cl.Test == "":
				cl.Test = a
			case cl.Command == "":
				cl.Command = a
			default:
				return nil, &Exit{Stderr: "Unrecognized command line argument: " + a + "\n", Code: 1}
			}
			continue
		}
		name, val := splitOpt(a)
		if canon(name) == "test" && val != nil {
			stderr.WriteString("WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options.\n")
			cl.Test = *val
			continue
		}
		opt, ok := optIndex[canon(name)]
		if sec, _ := optSection(name); !ok || sec == secScript || vs.set(opt, val) != nil {
			rest = append(rest, a)
			continue
		}
		if opt.typ == tFile && val != nil {
			if err := vs.readConfig(*val); err != nil {
				stderr.WriteString(err.Error() + "\n")
			}
		}
	}
	cl.Help, cl.Version = vs.flag("help"), vs.flag("version")
	if stderr.Len() > 0 {
		cl.Notices = append(cl.Notices, strings.TrimSuffix(stderr.String(), "\n"))
	}
	return rest, nil
}

// splitOpt splits "--name=value"; value is nil without "=".
func splitOpt(a string) (name string, val *string) {
	name, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
	if ok {
		return name, &v
	}
	return name, nil
}

// initOptions is sysbench's init() and log_init(): aliases, limits and the
// logger's options, checked before the banner.
func (cl *CommandLine) initOptions(vs *values) *Exit {
	for _, d := range []struct{ old, now string }{{"num-threads", "threads"}, {"max-requests", "events"}, {"max-time", "time"}, {"tx-rate", "rate"}} {
		n, err := vs.integer(d.old)
		if err != nil {
			return &Exit{Stderr: err.Error() + "\n", Code: 1}
		}
		if n > 0 && (d.old != "num-threads" || n > 1) {
			cl.Notices = append(cl.Notices, fmt.Sprintf("WARNING: --%s is deprecated, use --%s instead", d.old, d.now))
			v := strconv.Itoa(n)
			_ = vs.set(optIndex[canon(d.now)], &v)
		}
	}
	ints := map[string]int{}
	for _, name := range []string{"threads", "events", "time", "rand-spec-iter", "rand-spec-pct", "rand-spec-res", "rate", "report-interval", "verbosity", "percentile", "warmup-time"} {
		n, err := vs.integer(name)
		if err != nil {
			return &Exit{Stderr: err.Error() + "\n", Code: 1}
		}
		ints[name] = n
	}
	if ints["threads"] <= 0 {
		return &Exit{Stdout: fmt.Sprintf("FATAL: Invalid value for --threads: %d.\n\n", ints["threads"]), Code: 1}
	}
	for _, name := range []string{"events", "time", "rate", "report-interval", "warmup-time"} {
		if ints[name] < 0 {
			return fatalExit(false, "Invalid value for --%s: %d (writepath wants 0 or more)", name, ints[name])
		}
	}
	if ints["events"] == 0 && ints["time"] == 0 {
		cl.Notices = append(cl.Notices, "WARNING: Both event and time limits are disabled, running an endless test")
	}
	if ex := forcedShutdown(vs, ints["time"]); ex != nil {
		return ex
	}
	if vs.size("thread-stack-size") == 0 {
		return &Exit{Stdout: "FATAL: Invalid value for thread-stack-size: 0.\n\n", Code: 1}
	}
	cl.Output.Debug, cl.Output.Validate, cl.Output.DBDebug = vs.flag("debug"), vs.flag("validate"), vs.flag("db-debug")
	if t, _ := vs.str("rand-type"); randTypes[t] == 0 {
		return fatalExit(false, "Invalid random numbers distribution: %s.", t)
	}
	if ex := checkpoints(vs); ex != nil {
		return ex
	}
	cl.Output.Verbosity = ints["verbosity"]
	if cl.Output.Debug {
		cl.Output.Verbosity = 5
	}
	if cl.Output.Verbosity > 5 {
		return &Exit{Stdout: fmt.Sprintf("Invalid value for verbosity: %d\n", cl.Output.Verbosity), Code: 1}
	}
	if p := ints["percentile"]; p < 0 || p > 100 {
		return fatalExit(false, "Invalid value for --percentile: %d", p)
	}
	cl.Output.Histogram = vs.flag("histogram")
	if cl.Output.Histogram && ints["percentile"] == 0 {
		return fatalExit(false, "--histogram cannot be used with --percentile=0")
	}
	return nil
}

// forcedShutdown checks --forced-shutdown as sysbench does (it is read
// only with a time limit): off, N seconds, N% of --time, or no value for
// 5% of --time.
func forcedShutdown(vs *values, time int) *Exit {
	if time <= 0 {
		return nil
	}
	_, err := shutdownAfter(vs, time)
	return err
}

func shutdownAfter(vs *values, time int) (*uint32, *Exit) {
	s, ok := vs.str("forced-shutdown")
	if !ok {
		v := uint32(time / 20)
		return &v, nil
	}
	if strings.EqualFold(s, "off") {
		return nil, nil
	}
	num, pct := strings.CutSuffix(s, "%")
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil {
		return nil, fatalExit(false, "Invalid value for --forced-shutdown: '%s'", s)
	}
	v := uint32(n)
	if pct {
		v = uint32(n * uint64(time) / 100)
	}
	return &v, nil
}

// maxCheckpoints is sysbench's MAX_CHECKPOINTS.
const maxCheckpoints = 256

func checkpoints(vs *values) *Exit {
	l := vs.list("report-checkpoints")
	for _, s := range l {
		if n, err := strconv.ParseInt(s, 10, 64); err != nil || n < 0 || n > 1<<31-1 {
			return fatalExit(false, "Invalid value for --report-checkpoints: '%s'", s)
		}
	}
	if len(l) > maxCheckpoints {
		return fatalExit(false, "Too many checkpoints in --report-checkpoints (up to %d can be defined)", maxCheckpoints)
	}
	return nil
}

// builtinTests are sysbench's other tests and scripts: known, not here.
var builtinTests = map[string]bool{
	"fileio": true, "cpu": true, "memory": true, "threads": true, "mutex": true, "bulk_insert": true,
	"oltp_delete": true, "oltp_insert": true, "oltp_point_select": true, "oltp_read_only": true,
	"oltp_read_write": true, "oltp_update_index": true, "oltp_update_non_index": true,
	"select_random_points": true, "select_random_ranges": true, "oltp_common": true,
}

// IsWriteOnly reports whether a test name or script path names
// oltp_write_only ("oltp_write_only", ".../oltp_write_only.lua").
func IsWriteOnly(test string) bool {
	return strings.TrimSuffix(filepath.Base(test), ".lua") == "oltp_write_only"
}

// test is what sysbench does after its banner: load the test, check the
// command, parse the test's options.
func (cl *CommandLine) test(vs *values, rest []string) *Exit {
	switch base := strings.TrimSuffix(filepath.Base(cl.Test), ".lua"); {
	case cl.Test == "" || cl.Test == "-":
		ex := fatalExit(true, "writepath does not read a Lua script from standard input: name the test, oltp_write_only")
		ex.Stdin = true
		return ex
	case builtinTests[base]:
		return fatalExit(true, "writepath implements sysbench's oltp_write_only only; '%s' is not implemented", cl.Test)
	case !IsWriteOnly(cl.Test):
		return fatalExit(true, "Cannot find benchmark '%s': no such built-in test, file or module", cl.Test)
	case cl.Command == "":
		return fatalExit(true, "Command is required. Supported commands: %s", strings.Join(Commands, ", "))
	}
	for _, a := range rest {
		name, val := splitOpt(a)
		opt, ok := optIndex[canon(name)]
		if sec, _ := optSection(name); !ok || sec != secScript || vs.set(opt, val) != nil {
			return &Exit{Banner: true, Stderr: "invalid option: " + a + "\n", Code: 1}
		}
	}
	for _, c := range Commands {
		if c == cl.Command {
			return nil
		}
	}
	return &Exit{Banner: true, Stderr: "Unknown command: " + cl.Command + "\n", Code: 1}
}

// refusals are options writepath cannot honour when they are on, and why.
var refusals = map[string]string{
	"mysql_debug": "writepath does not use libmysqlclient, so there are no client library calls to trace; use --db-debug and --verbosity=5",
}

// specFrom builds a Spec from resolved values, every problem at once.
func specFrom(vs *values) (*oltpv1.Spec, []error) {
	s := &oltpv1.Spec{}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	integer := func(name string) int {
		n, err := vs.integer(name)
		add(err)
		return n
	}
	whole := func(name string, max float64) *uint32 {
		n, err := vs.whole(name, max)
		add(err)
		return &n
	}
	u32 := func(n int) *uint32 { v := uint32(max(n, 0)); return &v }
	s.Threads, s.TimeSeconds = u32(integer("threads")), u32(integer("time"))
	s.Events, s.Rate = uint64(max(integer("events"), 0)), float64(integer("rate"))
	s.ReportIntervalSeconds, s.WarmupSeconds = uint32(max(integer("report-interval"), 0)), uint32(max(integer("warmup-time"), 0))
	if t := integer("time"); t > 0 {
		sd, ex := shutdownAfter(vs, t)
		if ex != nil {
			add(errors.New(strings.TrimPrefix(strings.TrimSpace(ex.Stdout), "FATAL: ")))
		}
		s.ForcedShutdownSeconds = sd
	}
	for _, c := range vs.list("report-checkpoints") {
		n, err := strconv.ParseUint(c, 10, 31)
		if err != nil {
			add(fmt.Errorf("Invalid value for --report-checkpoints: '%s'", c))
			continue
		}
		s.ReportCheckpoints = append(s.ReportCheckpoints, uint32(n))
	}
	sort.Slice(s.ReportCheckpoints, func(i, j int) bool { return s.ReportCheckpoints[i] < s.ReportCheckpoints[j] })
	p := float64(integer("percentile"))
	s.Percentile = &p
	t, _ := vs.str("rand-type")
	s.RandType = randTypes[t]
	if s.RandType == 0 {
		add(fmt.Errorf("Invalid random numbers distribution: %s.", t))
	}
	if seed, _ := vs.str("rand-seed"); seed != "" {
		// Wider than sysbench's int: a spec's recorded 64-bit seed repeats it.
		n, err := strconv.ParseUint(strings.TrimSpace(seed), 10, 64)
		if err != nil {
			add(&invalidValue{"rand-seed", seed})
		}
		s.RandSeed = n
	}
	s.RandSpecIter, s.RandSpecPct, s.RandSpecRes = u32(integer("rand-spec-iter")), u32(integer("rand-spec-pct")), u32(integer("rand-spec-res"))
	h := vs.real("rand-pareto-h")
	s.RandParetoH = &h
	add(dbOptions(vs, s))
	tables, size := whole("tables", 100000), whole("table_size", 1<<31-1)
	s.Tables, s.TableSize = tables, size
	s.IndexUpdates, s.NonIndexUpdates, s.DeleteInserts = whole("index_updates", 1e6), whole("non_index_updates", 1e6), whole("delete_inserts", 1e6)
	ai, cs := vs.flag("auto_inc"), vs.flag("create_secondary")
	s.AutoInc, s.CreateSecondary = &ai, &cs
	s.SkipTrx, s.Secondary = vs.flag("skip_trx"), vs.flag("secondary")
	s.MysqlStorageEngine, _ = vs.str("mysql_storage_engine")
	add(serverOptions(vs, s))
	return s, errs
}

// driverInitError is a DB driver sysbench fails to initialize: the
// prepared statement mode, then the driver's name.
type driverInitError struct{ msg string }

func (e *driverInitError) Error() string { return e.msg }

// luaCaller is, for each command, the oltp_common.lua function (and its
// line in sysbench 1.0.20) whose driver initialization fails: sysbench
// names it on the line after the driver's.
var luaCaller = map[string]string{
	"prepare": "`sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:82",
	"prewarm": "`sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:97",
	"run":     "`thread_init' function failed: /usr/share/sysbench/oltp_common.lua:348",
	"cleanup": "`cleanup' function failed: /usr/share/sysbench/oltp_common.lua:387",
}

// driverExit ends a command whose DB driver does not initialize as
// sysbench ends it: the driver's complaint, then the Lua function's; for
// run, after the run's header, once per thread, then "Thread
// initialization failed!". Nil without such an error.
func driverExit(cl *CommandLine, spec *oltpv1.Spec, errs []error) *Exit {
	var de *driverInitError
	for _, err := range errs {
		if errors.As(err, &de) {
			break
		}
	}
	if de == nil {
		return nil
	}
	pair := "FATAL: " + de.msg + "\nFATAL: " + luaCaller[cl.Command] + ": failed to initialize the DB driver\n"
	threads := max(int(spec.GetThreads()), 1)
	switch {
	case cl.Command == "run":
		cl.Spec = spec // the header shows its options
		return &Exit{Banner: true, RunHeader: true, Stdout: strings.Repeat(pair, threads) + "FATAL: Thread initialization failed!\n", Code: 1}
	case threads > 1 && cl.Command != "cleanup":
		// sysbench's parallel prepare and prewarm: every thread fails (and
		// sysbench then exits 0; writepath says it failed).
		return &Exit{Banner: true, Stdout: "Initializing worker threads...\n\n" + strings.Repeat(pair, threads), Code: 1}
	}
	return &Exit{Banner: true, Stdout: pair, Code: 1}
}

// dbOptions reads the database and MySQL options into s.
func dbOptions(vs *values, s *oltpv1.Spec) error {
	var errs []error
	// sysbench checks the prepared statement mode, then the driver's name.
	psOK := true
	switch m, _ := vs.str("db-ps-mode"); m {
	case "auto":
	case "disable":
		s.UseTextProtocol = true
	default:
		errs = append(errs, &driverInitError{fmt.Sprintf("Invalid value for db-ps-mode: %s", m)})
		psOK = false
	}
	switch d, _ := vs.str("db-driver"); d {
	case "mysql":
	case "pgsql":
		errs = append(errs, errors.New("--db-driver=pgsql: writepath speaks the MySQL protocol only (MySQL, MariaDB)"))
	default:
		if psOK {
			errs = append(errs, &driverInitError{fmt.Sprintf("invalid database driver name: '%s'", d)})
		}
	}
	for name, why := range refusals {
		if vs.flag(name) {
			errs = append(errs, fmt.Errorf("--%s: %s", strings.ReplaceAll(name, "_", "-"), why))
		}
	}
	c := &oltpv1.Connection{}
	// Only what was given: a spec without a connection is pointed at a
	// managed or sandbox server.
	one := func(name string) string {
		l := vs.list(name)
		if !vs.was(name) {
			return ""
		}
		if len(l) > 1 {
			errs = append(errs, fmt.Errorf("--%s=%s: writepath connects every thread of a worker to one server; run one worker per server instead (--select)", name, strings.Join(l, ",")))
		}
		if len(l) == 0 {
			return ""
		}
		return l[0]
	}
	c.Host, c.Socket = one("mysql-host"), one("mysql-socket")
	if p := one("mysql-port"); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid value for --mysql-port: '%s' (want a TCP port)", p))
		}
		port := uint32(n)
		c.Port = &port
	}
	if user, _ := vs.str("mysql-user"); vs.was("mysql-user") {
		c.User = &user
	}
	if db, _ := vs.str("mysql-db"); vs.was("mysql-db") {
		c.Db = &db
	}
	c.Password, _ = vs.str("mysql-password")
	c.PasswordFile, _ = vs.str("mysql-password-file")
	if vs.was("mysql-ignore-errors") {
		c.IgnoreErrorsSet = true
		c.IgnoreErrors = append([]string(nil), vs.list("mysql-ignore-errors")...)
	}
	s.Connection = c
	s.DryRun, s.DbDebug, s.MysqlSsl = vs.flag("mysql-dry-run"), vs.flag("db-debug"), vs.flag("mysql-ssl")
	s.MysqlCompression = vs.flag("mysql-compression")
	return errors.Join(errs...)
}

// serverOptions reads writepath's managed-server options into s.
func serverOptions(vs *values, s *oltpv1.Spec) error {
	srv := &oltpv1.Server{}
	srv.Dir, _ = vs.str("mysqld-dir")
	srv.Snapshot, _ = vs.str("mysqld-snapshot")
	if b, ok := vs.str("mysqld-binary"); ok {
		srv.Binary = b
	}
	if b, ok := vs.str("binary"); ok {
		srv.Binary = b
	}
	srv.Listen, _ = vs.str("mysqld-listen")
	srv.Keep = vs.flag("mysqld-keep")
	var errs []error
	for _, v := range vs.settings {
		st, err := mysqld.ParseSetting(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--mysqld-set: %w", err))
			continue
		}
		srv.Settings = append(srv.Settings, &oltpv1.Setting{Key: st.Key, Value: st.Value})
	}
	if srv.Dir != "" || srv.Binary != "" || srv.Snapshot != "" || len(srv.Settings) > 0 || srv.Listen != "" || srv.Keep {
		s.Server = srv
	}
	return errors.Join(errs...)
}
