package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp"
)

// wantsHelp reports whether `run KIND ...` asks for the kind's help:
// --help or -h anywhere among its arguments, or "help" after its phases.
// (In sysbench's order, `oltp_write_only help` is sysbench's own.)
func wantsHelp(meta workload.Meta, args []string) bool {
	for _, a := range args {
		if a == "--help" || a == "-h" {
			return !(meta.Name == "oltp" && sysbenchOrder(args))
		}
	}
	_, rest := leadingPhases(args, func(s string) bool { _, ok := meta.Phase(s); return ok })
	return len(rest) > 0 && rest[0] == "help"
}

// kindHelp prints a kind's phases and options and starts nothing.
func kindHelp(meta workload.Meta, w io.Writer) error {
	if meta.Help != nil {
		return meta.Help(w)
	}
	var phases []string
	for _, p := range meta.Phases {
		phases = append(phases, p.Name)
	}
	_, err := fmt.Fprintf(w, "%s: %s.\n\nUsage:\n  writepath run %s [%s] [options]\n\nThe options are the kind's own syntax; it publishes no option list.\n",
		meta.Name, meta.Description, meta.Name, strings.Join(phases, "] ["))
	return err
}

// sysbenchOrder reports whether oltp arguments are in sysbench's order:
// a test name (oltp_write_only, or a path to its script) among them.
func sysbenchOrder(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "--") && oltp.IsWriteOnly(a) {
			return true
		}
	}
	return false
}
