package oltp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
)

// Options is a Spec with sysbench's defaults applied: what the code reads.
type Options struct {
	Tables, TableSize, Threads   int
	Time, Warmup, ReportInterval time.Duration
	Events                       uint64
	Rate                         float64
	Percentile                   float64

	Rand RandOptions

	AutoInc, SkipTrx, CreateSecondary bool
	IndexUpdates, NonIndexUpdates     int
	DeleteInserts                     int
	Engine                            string
	TextProtocol                      bool

	Conn ConnOptions

	Secondary, DryRun, DBDebug bool
	// Checkpoints are --report-checkpoints; ForcedShutdown is how long
	// after Time the run cuts transactions off (nil: never).
	Checkpoints    []time.Duration
	ForcedShutdown *time.Duration

	// Text is where phases print sysbench's lines (nil: nowhere). It is
	// not part of the spec: whoever runs a phase sets it.
	Text *Text
	// NoStatus skips the run's once-a-second sample of the server's
	// counters (a connection of its own) when no one reads the Recorder's
	// gauges: writepath sysbench in process opens only sysbench's
	// connections.
	NoStatus bool
	// pre are the run's connections, opened by the workload's SetUp
	// before the phase was reported ready (nil: Run opens them).
	pre []*session
}

// ConnOptions are sysbench's --mysql-* options.
type ConnOptions struct {
	Host, Socket, User, Password, DB string
	Port                             int
	// SSL is --mysql-ssl (see sslRefusal).
	SSL bool
	// Compress is --mysql-compression: every connection asks for the
	// compressed protocol (used if the server has it, as libmysqlclient).
	Compress bool
	// IgnoreAll is --mysql-ignore-errors=all.
	IgnoreAll bool
	// Ignore lists error numbers to roll back and retry on.
	Ignore []uint16
}

// DefaultIgnoreErrors is sysbench's --mysql-ignore-errors default:
// deadlock, table-full and lock-wait timeout.
var DefaultIgnoreErrors = []uint16{1213, 1020, 1205}

// Resolve applies sysbench's defaults to spec and validates the result,
// reporting every problem at once.
func Resolve(spec *oltpv1.Spec) (Options, error) {
	o := Options{
		Tables: int(u32(spec.Tables, 1)), TableSize: int(u32(spec.TableSize, 10000)),
		Threads: int(u32(spec.Threads, 1)), Time: secs(u32(spec.TimeSeconds, 10)),
		Warmup: secs(spec.GetWarmupSeconds()), ReportInterval: secs(spec.GetReportIntervalSeconds()),
		Events: spec.GetEvents(), Rate: spec.GetRate(), Percentile: f64(spec.Percentile, 95),
		AutoInc: b(spec.AutoInc, true), SkipTrx: spec.GetSkipTrx(), CreateSecondary: b(spec.CreateSecondary, true),
		IndexUpdates: int(u32(spec.IndexUpdates, 1)), NonIndexUpdates: int(u32(spec.NonIndexUpdates, 1)),
		DeleteInserts: int(u32(spec.DeleteInserts, 1)), Engine: spec.GetMysqlStorageEngine(),
		TextProtocol: spec.GetUseTextProtocol(), Secondary: spec.GetSecondary(), DryRun: spec.GetDryRun(),
		DBDebug: spec.GetDbDebug(),
	}
	for _, c := range spec.GetReportCheckpoints() {
		o.Checkpoints = append(o.Checkpoints, secs(c))
	}
	if spec.ForcedShutdownSeconds != nil {
		d := secs(spec.GetForcedShutdownSeconds())
		o.ForcedShutdown = &d
	}
	if o.Engine == "" {
		o.Engine = "innodb"
	}
	var errs []error
	o.Rand, errs = resolveRand(spec)
	c, err := resolveConn(spec.GetConnection())
	c.SSL, c.Compress = spec.GetMysqlSsl(), spec.GetMysqlCompression()
	o.Conn = c
	errs = append(errs, err)
	errs = append(errs, o.validate()...)
	return o, errors.Join(errs...)
}

func (o Options) validate() []error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(o.Tables >= 1 && o.Tables <= 100000, "--tables=%d: want 1..100000", o.Tables)
	check(o.TableSize >= 1 && o.TableSize <= 1<<31-1, "--table-size=%d: want 1..2147483647", o.TableSize)
	check(o.Threads >= 1 && o.Threads <= 10000, "--threads=%d: want 1..10000", o.Threads)
	check(o.Rate >= 0, "--rate=%v: want >= 0", o.Rate)
	check(o.Percentile >= 0 && o.Percentile <= 100, "--percentile=%v: want 0..100", o.Percentile)
	check(o.Time > 0 || o.Events > 0, "--time=0 and --events=0: the run would never end; give one of them")
	check(o.Warmup < o.Time || o.Time == 0, "--warmup-time=%v is not shorter than --time=%v", o.Warmup, o.Time)
	check(isIdent(o.Engine), "--mysql-storage-engine=%q: not an engine name", o.Engine)
	check(isIdent(o.Conn.DB), "--mysql-db=%q: want a plain database name", o.Conn.DB)
	return errs
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func resolveConn(c *oltpv1.Connection) (ConnOptions, error) {
	if c == nil {
		c = &oltpv1.Connection{}
	}
	o := ConnOptions{Host: c.GetHost(), Socket: c.GetSocket(), Port: int(u32(c.Port, 3306)),
		User: str(c.User, "sbtest"), Password: c.GetPassword(), DB: str(c.Db, "sbtest")}
	if o.Host == "" {
		o.Host = "localhost"
	}
	if !c.GetIgnoreErrorsSet() {
		o.Ignore = DefaultIgnoreErrors
		return o, nil
	}
	var errs []error
	for _, e := range c.GetIgnoreErrors() {
		switch e = strings.TrimSpace(e); e {
		case "all":
			o.IgnoreAll = true
		case "none", "":
		default:
			n, err := strconv.ParseUint(e, 10, 16)
			if err != nil {
				errs = append(errs, fmt.Errorf("--mysql-ignore-errors: %q is not an error number (want e.g. 1213,1205 or all)", e))
				continue
			}
			o.Ignore = append(o.Ignore, uint16(n))
		}
	}
	return o, errors.Join(errs...)
}

// Ignored reports whether MySQL error number n is retried.
func (c ConnOptions) Ignored(n uint16) bool {
	if c.IgnoreAll {
		return true
	}
	for _, e := range c.Ignore {
		if e == n {
			return true
		}
	}
	return false
}

func u32(p *uint32, def uint32) uint32 {
	if p == nil {
		return def
	}
	return *p
}

func f64(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func b(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func str(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func secs(s uint32) time.Duration { return time.Duration(s) * time.Second }
