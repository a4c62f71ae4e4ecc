package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/writepath/writepath/internal/echo"
	"github.com/writepath/writepath/workload"
)

// wantsHelp reports whether `run KIND ...` asks for the kind's help:
// --help or -h anywhere among its arguments, or "help" after its phases.
// (Arguments in the order of the kind's front end are its tool's, help
// included: sysbench's `oltp_write_only help`.)
func wantsHelp(meta workload.Meta, args []string) bool {
	for _, a := range args {
		if a == "--help" || a == "-h" {
			return !frontEndOrder(meta, args)
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

// frontEndOrder reports whether a kind's arguments are in the order of its
// front end (workload.Meta.FrontEnd: sysbench's for oltp).
func frontEndOrder(meta workload.Meta, args []string) bool {
	return meta.FrontEnd != nil && meta.FrontEnd.Takes(args)
}

// runFrontEnd runs arguments in the order of the kind's front end on the
// fabric o names, with that tool's output: the commands this binary has
// for the names a FrontEnd may give.
func (o *runOptions) runFrontEnd(ctx context.Context, meta workload.Meta, args []string, stdout, stderr io.Writer) error {
	switch meta.FrontEnd.Name {
	case "sysbench":
		return o.sysbench(ctx, args, stdout, stderr, false)
	}
	return fmt.Errorf("kind %s: its arguments are in %s's order, which this binary cannot run (give them in writepath run's order)",
		meta.Name, echo.Quote(meta.FrontEnd.Name))
}
