package oltp

import (
	"fmt"
	"io"
	"path/filepath"
)

// WriteUsage prints `sysbench --help` as sysbench 1.0.20 prints it, with
// writepath's test, drivers and own options.
//
// extra, if set, prints more options at the end of the driver-dependent
// part (before "Compiled-in tests:"), where scripts that check sysbench's
// help (its own opt_help.t) skip what depends on the build.
func WriteUsage(w io.Writer, extra func(io.Writer)) error {
	fmt.Fprint(w, "Usage:\n  sysbench [options]... [testname] [command]\n\n")
	fmt.Fprint(w, "Commands implemented by most tests: prepare run cleanup help\n\n")
	fmt.Fprintln(w, "General options:")
	printOptions(w, sbOptions[secGeneral])
	fmt.Fprintln(w, "Pseudo-Random Numbers Generator options:")
	printOptions(w, sbOptions[secRand])
	fmt.Fprintln(w, "Log options:")
	printOptions(w, sbOptions[secLogText])
	printOptions(w, sbOptions[secLogOper])
	fmt.Fprint(w, "General database options:\n\n")
	printOptions(w, sbOptions[secDB])
	fmt.Fprint(w, "\nCompiled-in database drivers:\n  mysql - MySQL driver\n")
	fmt.Fprint(w, "  pgsql - PostgreSQL driver (its options are accepted; writepath speaks the MySQL protocol only)\n\n")
	fmt.Fprintln(w, "mysql options:")
	printOptions(w, sbOptions[secMySQL])
	fmt.Fprintln(w, "pgsql options:")
	printOptions(w, sbOptions[secPgSQL])
	fmt.Fprintln(w, "writepath options:")
	printOptions(w, sbOptions[secWritepath])
	if extra != nil {
		extra(w)
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "Compiled-in tests:\n  oltp_write_only - sysbench 1.0.20's oltp_write_only.lua, statement for statement\n\n")
	_, err := fmt.Fprint(w, "See 'sysbench <testname> help' for a list of options for each test.\n\n")
	return err
}

// WriteTestHelp prints `sysbench oltp_write_only help`: the script's
// options (test is the name or path given, shown by its base name).
func WriteTestHelp(w io.Writer, test string) error {
	fmt.Fprintf(w, "%s options:\n", filepath.Base(test))
	printOptions(w, sbOptions[secScript])
	return nil
}

// Help prints the options of the oltp kind (`writepath run oltp --help`):
// those a spec takes, from the table the parsers use.
func Help(w io.Writer) error {
	fmt.Fprint(w, "oltp: sysbench 1.0.20 oltp_write_only, statement for statement.\n\n")
	fmt.Fprint(w, "Usage:\n  writepath run oltp [prepare] [prewarm] [run] [cleanup] [options]\n")
	fmt.Fprint(w, "  writepath run oltp oltp_write_only [options] prepare|prewarm|run|cleanup|help   (sysbench's order and output)\n\n")
	fmt.Fprint(w, "Phases: prepare (one worker), prewarm (one worker, only when named), run (every worker), cleanup (one\n"+
		"worker); none named runs prepare, run and cleanup. Options are sysbench's (dashes or underscores),\n"+
		"--name=value or --name value. Without --mysql-* options a sandbox server is started and removed.\n\n")
	titles := map[section]string{secGeneral: "General options:", secRand: "Pseudo-Random Numbers Generator options:",
		secLogOper: "Log options:", secDB: "General database options:", secMySQL: "mysql options:",
		secScript: "oltp_write_only options:", secWritepath: "writepath options:"}
	for _, s := range []section{secGeneral, secRand, secLogOper, secDB, secMySQL, secScript, secWritepath} {
		var opts []sbOpt
		for _, opt := range sbOptions[s] {
			if !textOnly[canon(opt.name)] {
				opts = append(opts, opt)
			}
		}
		fmt.Fprintln(w, titles[s])
		printOptions(w, opts)
	}
	_, err := fmt.Fprint(w, "--verbosity, --histogram, --debug, --validate, --db-debug and --report-checkpoints change only the\n"+
		"text sysbench prints: use them with writepath sysbench or the oltp_write_only order above.\n")
	return err
}

// loadOptions are the options that shape an OLTP load another kind drives
// (crash): its threads, random numbers, transaction mix and tables.
var loadOptions = map[string]bool{"threads": true, "db-ps-mode": true, "mysql-db": true, "mysql-ignore-errors": true}

// WriteLoadHelp prints the options of an OLTP load another kind drives
// (crash), from the table the parsers use.
func WriteLoadHelp(w io.Writer) error {
	var opts []sbOpt
	for _, s := range []section{secGeneral, secDB, secMySQL} {
		for _, opt := range sbOptions[s] {
			if loadOptions[opt.name] {
				opts = append(opts, opt)
			}
		}
	}
	opts = append(opts, sbOptions[secRand]...)
	opts = append(opts, sbOptions[secScript]...)
	printOptions(w, opts)
	return nil
}
