package oltp

import (
	"fmt"
	"io"
	"strings"
)

// The command line of sysbench 1.0.20 running oltp_write_only: every option
// it accepts (its general, random-number, log, database, MySQL and
// PostgreSQL options, and oltp_common.lua's), plus writepath's own. The
// parsers (ParseCommandLine, ParseArgs) and the help texts are both made
// from this one table.

// optType is sysbench's sb_arg_type_t: how a value is read and how help
// shows it.
type optType int

const (
	tBool optType = iota + 1
	tInt
	tSize
	tDouble
	tString
	tList
	tFile
)

// format is how sysbench's help shows a value of the type.
func (t optType) format() string {
	return [...]string{"", "[=on|off]", "=N", "=SIZE", "=N", "=STRING", "=[LIST,...]", "=FILENAME"}[t]
}

// section groups options as sysbench's help prints them; each is aligned
// on its own.
type section int

const (
	secGeneral section = iota
	secRand
	secLogText
	secLogOper
	secDB
	secMySQL
	secPgSQL
	secScript    // oltp_common.lua's options: `sysbench oltp_write_only help`
	secWritepath // writepath's own: a managed server, a warm-up window
)

// sbOpt is one option.
type sbOpt struct {
	name string // as registered: dashes, or oltp_common.lua's underscores
	typ  optType
	desc string
	def  string // the default, as help prints it in brackets
	// noDef: no default (help prints none, the value is unset).
	noDef bool
}

const none = "\x00" // def of an option without a default

func o(name string, typ optType, def, desc string) sbOpt {
	return sbOpt{name: name, typ: typ, desc: desc, def: def, noDef: def == none}
}

// sbOptions are the options by section, in the order sysbench prints them
// (oltp_common.lua's sorted by name, as sysbench sorts them).
var sbOptions = [...][]sbOpt{
	secGeneral: {
		o("threads", tInt, "1", "number of threads to use"),
		o("events", tInt, "0", "limit for total number of events"),
		o("time", tInt, "10", "limit for total execution time in seconds"),
		o("forced-shutdown", tString, "off", "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable"),
		o("thread-stack-size", tSize, "64K", "size of stack per thread"),
		o("rate", tInt, "0", "average transactions rate. 0 for unlimited rate"),
		o("report-interval", tInt, "0", "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports"),
		o("report-checkpoints", tList, "", "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default."),
		o("debug", tBool, "off", "print more debugging info"),
		o("validate", tBool, "off", "perform validation checks where possible"),
		o("help", tBool, "off", "print help and exit"),
		o("version", tBool, "off", "print version and exit"),
		o("config-file", tFile, none, "File containing command line options"),
		o("tx-rate", tInt, "0", "deprecated alias for --rate"),
		o("max-requests", tInt, "0", "deprecated alias for --events"),
		o("max-time", tInt, "0", "deprecated alias for --time"),
		o("num-threads", tInt, "1", "deprecated alias for --threads"),
	},
	secRand: {
		o("rand-type", tString, "special", "random numbers distribution {uniform,gaussian,special,pareto}"),
		o("rand-spec-iter", tInt, "12", "number of iterations used for numbers generation"),
		o("rand-spec-pct", tInt, "1", "percentage of values to be treated as 'special' (for special distribution)"),
		o("rand-spec-res", tInt, "75", "percentage of 'special' values to use (for special distribution)"),
		o("rand-seed", tInt, "0", "seed for random number generator. When 0, the current time is used as a RNG seed."),
		o("rand-pareto-h", tDouble, "0.2", "parameter h for pareto distribution"),
	},
	secLogText: {
		o("verbosity", tInt, "3", "verbosity level {5 - debug, 0 - only critical messages}"),
	},
	secLogOper: {
		o("percentile", tInt, "95", "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations"),
		o("histogram", tBool, "off", "print latency histogram in report"),
	},
	secDB: {
		o("db-driver", tString, "mysql", "specifies database driver to use ('help' to get list of available drivers)"),
		o("db-ps-mode", tString, "auto", "prepared statements usage mode {auto, disable}"),
		o("db-debug", tBool, "off", "print database-specific debug information"),
	},
	secMySQL: {
		o("mysql-host", tList, "localhost", "MySQL server host"),
		o("mysql-port", tList, "3306", "MySQL server port"),
		o("mysql-socket", tList, none, "MySQL socket"),
		o("mysql-user", tString, "sbtest", "MySQL user"),
		o("mysql-password", tString, "", "MySQL password"),
		o("mysql-db", tString, "sbtest", "MySQL database name"),
		o("mysql-ssl", tBool, "off", "use SSL connections, if available in the client library"),
		o("mysql-ssl-cipher", tString, "", "use specific cipher for SSL connections"),
		o("mysql-compression", tBool, "off", "use compression, if available in the client library"),
		o("mysql-debug", tBool, "off", "trace all client library calls"),
		o("mysql-ignore-errors", tList, "1213,1020,1205", `list of errors to ignore, or "all"`),
		o("mysql-dry-run", tBool, "off", "Dry run, pretend that all MySQL client API calls are successful without executing them"),
	},
	secPgSQL: {
		o("pgsql-host", tString, "localhost", "PostgreSQL server host"),
		o("pgsql-port", tInt, "5432", "PostgreSQL server port"),
		o("pgsql-user", tString, "sbtest", "PostgreSQL user"),
		o("pgsql-password", tString, "", "PostgreSQL password"),
		o("pgsql-db", tString, "sbtest", "PostgreSQL database name"),
	},
	secScript: {
		o("auto_inc", tBool, "on", "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs"),
		o("create_secondary", tBool, "on", "Create a secondary index in addition to the PRIMARY KEY"),
		o("delete_inserts", tDouble, "1", "Number of DELETE/INSERT combinations per transaction"),
		o("distinct_ranges", tDouble, "1", "Number of SELECT DISTINCT queries per transaction"),
		o("index_updates", tDouble, "1", "Number of UPDATE index queries per transaction"),
		o("mysql_storage_engine", tString, "innodb", "Storage engine, if MySQL is used"),
		o("non_index_updates", tDouble, "1", "Number of UPDATE non-index queries per transaction"),
		o("order_ranges", tDouble, "1", "Number of SELECT ORDER BY queries per transaction"),
		o("pgsql_variant", tString, none, "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0"),
		o("point_selects", tDouble, "10", "Number of point SELECT queries per transaction"),
		o("range_selects", tBool, "on", "Enable/disable all range SELECT queries"),
		o("range_size", tDouble, "100", "Range size for range SELECT queries"),
		o("secondary", tBool, "off", "Use a secondary index in place of the PRIMARY KEY"),
		o("simple_ranges", tDouble, "1", "Number of simple range SELECT queries per transaction"),
		o("skip_trx", tBool, "off", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode"),
		o("sum_ranges", tDouble, "1", "Number of SELECT SUM() queries per transaction"),
		o("table_size", tDouble, "10000", "Number of rows per table"),
		o("tables", tDouble, "1", "Number of tables"),
	},
	secWritepath: {
		o("warmup-time", tInt, "0", "execute transactions for this many seconds before counting them in the final statistics"),
		o("mysqld-dir", tString, none, "manage a MySQL/MariaDB server in this directory (initialised, started and snapshotted by the run's first phase)"),
		o("mysqld-binary", tString, none, "the managed server's mysqld or mariadbd (alias --binary)"),
		o("mysqld-set", tString, none, "a my.cnf setting key=value of the managed server; repeatable (alias --set)"),
		o("mysqld-snapshot", tString, none, "roll the managed server's datadir back to this copy before the run (taken after the first prepare)"),
		o("mysqld-listen", tString, none, "the managed server listens for TCP on this address too (default: its Unix socket only)"),
		o("mysqld-keep", tBool, "off", "leave the managed server running after each phase (default: a phase stops the server it started)"),
		o("mysql-password-file", tString, none, "read the MySQL password from this file's first line on the worker (mode 0600); it is stored nowhere"),
		o("binary", tString, none, "alias of --mysqld-binary"),
		o("set", tString, none, "alias of --mysqld-set"),
	},
}

// ignoredByWriteOnly are oltp_common.lua's options that oltp_write_only.lua
// accepts and never reads (its event() runs no SELECT; pgsql_variant
// applies to the PostgreSQL driver only), as in sysbench.
var ignoredByWriteOnly = map[string]bool{
	"distinct_ranges": true, "order_ranges": true, "point_selects": true, "range_selects": true,
	"range_size": true, "simple_ranges": true, "sum_ranges": true, "pgsql_variant": true,
}

// canon is an option name as sysbench compares them: dashes and
// underscores are the same character.
func canon(name string) string { return strings.ReplaceAll(name, "-", "_") }

// optIndex finds options by canonical name.
var optIndex = func() map[string]*sbOpt {
	m := map[string]*sbOpt{}
	for s := range sbOptions {
		for i := range sbOptions[s] {
			opt := &sbOptions[s][i]
			if _, dup := m[canon(opt.name)]; dup {
				panic("oltp: option listed twice: " + opt.name) // the table above is wrong
			}
			m[canon(opt.name)] = opt
		}
	}
	return m
}()

// optSection returns the section of a known option.
func optSection(name string) (section, bool) {
	for s := range sbOptions {
		for _, opt := range sbOptions[s] {
			if canon(opt.name) == canon(name) {
				return section(s), true
			}
		}
	}
	return 0, false
}

// printOptions is sb_print_options: "  --name=FMT desc [default]", the
// descriptions aligned one column past the longest name and format, then
// a blank line.
func printOptions(w io.Writer, opts []sbOpt) {
	width := 0
	for _, opt := range opts {
		width = max(width, len(opt.name)+len(opt.typ.format()))
	}
	for _, opt := range opts {
		fmt.Fprintf(w, "  --%s%-*s%s", opt.name, width-len(opt.name)+1, opt.typ.format(), opt.desc)
		if !opt.noDef {
			fmt.Fprintf(w, " [%s]", opt.def)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
