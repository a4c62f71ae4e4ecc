package crash

import (
	"fmt"
	"io"
	"strings"

	"github.com/writepath/writepath/workload/oltp"
)

// Help prints the crash kind's options (`writepath run crash --help`):
// what a round does, then WriteOptions.
func Help(w io.Writer) error {
	var b strings.Builder
	b.WriteString("crash: InnoDB crash-recovery timing. Each round restores the prepared datadir, starts the managed\n" +
		"server with the --set settings, runs the OLTP write-only load, kills it (kill -9, or a power cut),\n" +
		"restarts it and times the recovery from the live error log, then checks that every acknowledged\n" +
		"commit survived and runs CHECK TABLE.\n\n" +
		"Usage:\n  writepath run crash [rounds] [options]   on a fabric worker (placement: one)\n" +
		"  writepath crash [options] [--json]        locally, without a fabric\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return WriteOptions(w)
}

// WriteOptions prints the crash options, from the table parseArgs reads,
// then the OLTP load's.
func WriteOptions(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Crash options:\n")
	width := 0
	for _, f := range flagTable {
		width = max(width, len(flagUsage(f)))
	}
	for _, f := range flagTable {
		fmt.Fprintf(&b, "  %-*s  %s", width, flagUsage(f), f.help)
		if f.def != "" {
			fmt.Fprintf(&b, " [%s]", f.def)
		}
		b.WriteByte('\n')
	}
	b.WriteString("\nLoad options (sysbench oltp_write_only's; the load connects to the managed server as root and runs\n" +
		"until the kill, so --time, --events and --rate do not apply):\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := oltp.WriteLoadHelp(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s.\n", ModeNote)
	return err
}

// flagUsage is how the help names a crash option.
func flagUsage(f flag) string {
	if f.boolean {
		return "--" + f.name
	}
	return "--" + f.name + " " + f.arg
}
