package fio

import (
	"fmt"
	"io"
	"strings"
)

// usageRow is one of fio 3.33's --help lines (init.c's usage), for one of
// cliFlags. fio's rows are printed in fio's order and shape (a tab to
// column 24) for the flags writepath takes, so scripts and eyes that read
// fio's --help read the same; writepath's own flags and notes follow.
type usageRow struct {
	flag  string   // cliFlags key
	usage string   // "--eta=when"
	help  string   // fio's text
	more  []string // fio's continuation lines, as printed
	note  string   // what the flag does here, when not what fio's text says
}

var usageRows = []usageRow{
	{flag: "debug", usage: "--debug=options", help: "Enable debug logging. May be one/more of:",
		more: []string{"\t\t\tprocess,file,io,mem,blktrace,verify,random,parse,", "\t\t\tdiskutil,job,mutex,profile,time,net,rate,compress,", "\t\t\tsteadystate,helperthread,zbd"}},
	{flag: "parse-only", usage: "--parse-only", help: "Parse options only, don't start any IO"},
	{flag: "merge-blktrace-only", usage: "--merge-blktrace-only", help: "Merge blktraces only, don't start any IO"},
	{flag: "output", usage: "--output", help: "Write output to file"},
	{flag: "bandwidth-log", usage: "--bandwidth-log", help: "Generate aggregate bandwidth logs"},
	{flag: "minimal", usage: "--minimal", help: "Minimal (terse) output"},
	{flag: "output-format", usage: "--output-format=type", help: "Output format (terse,json,json+,normal)"},
	{flag: "terse-version", usage: "--terse-version=type", help: "Set terse version output format (default 3, or 2 or 4 or 5)"},
	{flag: "version", usage: "--version", help: "Print version info and exit"},
	{flag: "help", usage: "--help", help: "Print this page"},
	{flag: "cpuclock-test", usage: "--cpuclock-test", help: "Perform test/validation of CPU clock"},
	{flag: "crctest", usage: "--crctest=[type]", help: "Test speed of checksum functions"},
	{flag: "cmdhelp", usage: "--cmdhelp=cmd", help: "Print command help, \"all\" for all of them"},
	{flag: "enghelp", usage: "--enghelp=engine", help: "Print ioengine help, or list available ioengines"},
	{flag: "enghelp", usage: "--enghelp=engine,cmd", help: "Print help for an ioengine cmd"},
	{flag: "showcmd", usage: "--showcmd", help: "Turn a job file into command line options"},
	{flag: "eta", usage: "--eta=when", help: "When ETA estimate should be printed", more: []string{"            \t\tMay be \"always\", \"never\" or \"auto\""}},
	{flag: "eta-newline", usage: "--eta-newline=t", help: "Force a new line for every 't' period passed"},
	{flag: "status-interval", usage: "--status-interval=t", help: "Force full status dump every 't' period passed"},
	{flag: "readonly", usage: "--readonly", help: "Turn on safety read-only checks, preventing writes"},
	{flag: "section", usage: "--section=name", help: "Only run specified section in job file, multiple sections can be specified"},
	{flag: "alloc-size", usage: "--alloc-size=kb", help: "Set smalloc pool to this size in kb (def 16384)", note: "accepted; writepath has no smalloc pool"},
	{flag: "warnings-fatal", usage: "--warnings-fatal", help: "Fio parser warnings are fatal", note: "accepted; every parser problem is already an error"},
	{flag: "max-jobs", usage: "--max-jobs=nr", help: "Maximum number of threads/processes to support", note: "accepted (fio 3.33 ignores it too); at most 4096 jobs"},
	{flag: "server", usage: "--server=args", help: "Start a backend fio server"},
	{flag: "daemonize", usage: "--daemonize=pidfile", help: "Background fio server, write pid to file"},
	{flag: "client", usage: "--client=hostname", help: "Talk to remote backend(s) fio server at hostname"},
	{flag: "remote-config", usage: "--remote-config=file", help: "Tell fio server to load this local job file"},
	{flag: "idle-prof", usage: "--idle-prof=option", help: "Report cpu idleness on a system or percpu basis",
		more: []string{"\t\t\t(option=system,percpu) or run unit work", "\t\t\tcalibration only (option=calibrate)"}},
	{flag: "inflate-log", usage: "--inflate-log=log", help: "Inflate and output compressed log"},
	{flag: "trigger-file", usage: "--trigger-file=file", help: "Execute trigger cmd when file exists"},
	{flag: "trigger-timeout", usage: "--trigger-timeout=t", help: "Execute trigger at this time"},
	{flag: "trigger", usage: "--trigger=cmd", help: "Set this command as local trigger"},
	{flag: "trigger-remote", usage: "--trigger-remote=cmd", help: "Set this command as remote trigger"},
	{flag: "aux-path", usage: "--aux-path=path", help: "Use this path for fio state generated files", note: "accepted; writepath writes no state files"},
}

// usageExtras are the flags writepath takes that fio 3.33's usage does
// not list.
var usageExtras = []usageRow{
	{flag: "eta-interval", usage: "--eta-interval=t", help: "Update the ETA line every 't' (default 1s; fio takes it, unlisted)"},
}

// usageLine is fio's "  --flag<tabs>help": tabs to column 24, at least one.
func usageLine(b *strings.Builder, r usageRow) {
	b.WriteString("  " + r.usage)
	col := 2 + len(r.usage)
	for n := 0; n == 0 || col < 24; n++ {
		col = (col/8 + 1) * 8
		b.WriteByte('\t')
	}
	b.WriteString(r.help + "\n")
	for _, m := range r.more {
		b.WriteString(m + "\n")
	}
}

// writeHelp is fio's --help: fio's usage with the flags writepath takes,
// then writepath's own: its extra flags, what the accepted no-op flags do
// here, and the refused ones.
func writeHelp(w io.Writer, version string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nfio [options] [job options] <job file(s)>\n", versionString(version))
	var notes, refusedFlags []string
	for _, r := range usageRows {
		if cliFlags[r.flag].refuse != "" {
			if len(refusedFlags) == 0 || refusedFlags[len(refusedFlags)-1] != "--"+r.flag {
				refusedFlags = append(refusedFlags, "--"+r.flag)
			}
			continue
		}
		usageLine(&b, r)
		if r.note != "" {
			notes = append(notes, fmt.Sprintf("  --%s: %s", r.flag, r.note))
		}
	}
	b.WriteString("\nwritepath (fio's flags above as fio 3.33 takes them, and):\n")
	for _, r := range usageExtras {
		usageLine(&b, r)
	}
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	fmt.Fprintf(&b, "  Refused, with the reason when given: %s\n", strings.Join(refusedFlags, " "))
	b.WriteString("  Job options: --cmdhelp=all; engines: --enghelp; on the fabric: writepath run fio --help\n")
	_, err := io.WriteString(w, b.String())
	return err
}
