package fio

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/workload"
)

// RunCommand is `writepath fio ARGS...`: fio's command line run locally,
// printing what fio prints where fio prints it: reports on stdout (or
// --output), nothing on stderr but errors (fio's test driver wants stderr
// empty). version is writepath's release, shown after fio's.
func RunCommand(ctx context.Context, args []string, stdout, stderr io.Writer, version string) error {
	c, err := ParseCommand(args)
	if err != nil {
		return err
	}
	switch c.Action {
	case ActionVersion:
		_, err = fmt.Fprintln(stdout, versionString(version))
		return err
	case ActionHelp:
		return writeHelp(stdout, version)
	case ActionCmdHelp:
		return writeCmdHelp(stdout, stderr, c.Arg)
	case ActionEngHelp:
		return writeEngHelp(stdout, c.Arg)
	case ActionShowCmd:
		_, err = io.WriteString(stdout, c.ShowCmd)
		return err
	case ActionParseOnly:
		return nil
	case ActionInflate:
		return InflateLog(c.Arg, stdout)
	}
	return runLocal(ctx, c, stdout, stderr, version)
}

// runLocal runs the jobs with a Recorder ticked for the ETA line, then
// writes the report.
func runLocal(ctx context.Context, c *Command, stdout, stderr io.Writer, version string) error {
	w, err := NewFromSpec(c.Spec)
	if err != nil {
		return err
	}
	out := stdout
	if c.Spec.Output != "" {
		f, err := os.Create(c.Spec.Output)
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		defer f.Close()
		out = f
	}
	eta, stop, etaShown := showEta(c, stdout)
	w.SetStatus(c.StatusInterval, out)
	// The header goes out before the jobs run, as fio prints it (and
	// before --output-format=normal,json's JSON).
	w.SetHeader(out, etaShown && out == stdout && c.StatusInterval == 0)
	// fio's own lines as the jobs run: its errors on stderr, its
	// job-ended lines where the report goes.
	w.SetFioLog(out, stderr)
	// Layout notes go into the report, as fio prints them on stdout.
	// writepath's log says nothing here: a job's failure is printed as
	// fio prints it (above, and in the report), or returned.
	env := workload.Env{Start: time.Now(), Version: version, Log: slog.New(slog.DiscardHandler)}
	runErr := workload.Drive(ctx, w, PhaseRun, env, etaEvery(c), eta)
	stop()
	if repErr := w.Report(out); repErr != nil && runErr == nil {
		return repErr
	}
	if runErr != nil {
		// fio exits with the number of jobs that failed, having said why
		if n, reported := w.failedJobs(); n > 0 && reported {
			return JobsFailed(n)
		}
	}
	return runErr
}

// etaEvery is --eta-interval (1 s by default).
func etaEvery(c *Command) time.Duration {
	if c.EtaInterval <= 0 {
		return time.Second
	}
	return c.EtaInterval
}

// showEta shows each interval as fio's ETA line on stdout: with
// --eta=always, or --eta=auto when stdout is a terminal; --eta-newline=t
// starts a new line every t instead of rewriting one. stop ends the line.
func showEta(c *Command, stdout io.Writer) (tick func(workload.Snapshot), stop func(), shows bool) {
	show := c.Eta == "always"
	if f, ok := stdout.(*os.File); ok && c.Eta == "auto" {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		show = err == nil
	}
	lastNL := time.Now()
	e := &etaState{jobs: c.Spec.Jobs, start: lastNL}
	shown, newline := false, false
	tick = func(s workload.Snapshot) {
		if !show {
			return
		}
		if !shown {
			e.start, lastNL = s.Start, s.Start
		}
		// As fio's display_thread_status: each line ends with \r and is
		// rewritten by the next; --eta-newline=t starts a new one every t.
		if newline {
			fmt.Fprint(stdout, "\n")
			newline, e.lastLength = false, 0
		}
		fmt.Fprintf(stdout, "%s\r", e.line(s))
		shown = true
		if c.EtaNewline > 0 && s.End.Sub(lastNL) > c.EtaNewline {
			newline, lastNL = true, s.End
		}
	}
	return tick, func() {
		if show {
			fmt.Fprint(stdout, "\n") // fio ends its ETA line (or the header's) before the report
		}
	}, show
}

// writeCmdHelp is fio's --cmdhelp: one option's help (cmdHelpTable, fio
// 3.33's fields), or every option's with "all" (or nothing). A name is
// found as fio finds it: the option's name or its alias, fio's or
// writepath's.
func writeCmdHelp(w, errw io.Writer, name string) error {
	var b strings.Builder
	if name == "" || name == "all" {
		writeCmdHelpAll(&b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	main := name
	if a, ok := aliases[name]; ok {
		main = a
	}
	h := cmdHelpByOpt[main]
	if h == nil {
		for i := range cmdHelpTable {
			if c := &cmdHelpTable[i]; c.name == name || c.alias == name {
				h = c
			}
		}
	}
	switch why, no := refused[name]; {
	case h != nil:
		writeOptionHelp(&b, h)
	case no:
		fmt.Fprintf(&b, "%20s: not supported here: %s\n", name, why)
	default:
		// fio's show_cmd_help: the complaint on stderr, unterminated,
		// then the closest option's help if it is near enough
		if _, err := fmt.Fprintf(errw, "No such command: %s", name); err != nil {
			return err
		}
		if c, dist := closestOption(name); c != nil && dist < 3 {
			b.WriteString(" - showing closest match\n")
			writeOptionHelp(&b, c)
		} else {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// closestOption is the option (of fio's general ones, in fio's order) whose
// name is the least edit distance from name, the first of equals.
func closestOption(name string) (*cmdHelp, int) {
	var best *cmdHelp
	bestDist := math.MaxInt
	for i := range cmdHelpTable {
		c := &cmdHelpTable[i]
		if c.depth < 0 {
			continue
		}
		if d := editDistance(name, c.name); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist
}

// editDistance is the Levenshtein distance (fio's string_distance).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// writeEngHelp is fio's --enghelp: the engines, or why one is refused.
func writeEngHelp(w io.Writer, engine string) error {
	var b strings.Builder
	name, _, _ := strings.Cut(engine, ",")
	switch _, ok := engineNames[name]; {
	case name == "":
		b.WriteString("Available IO engines:\n")
		for _, e := range engineList() {
			fmt.Fprintf(&b, "\t%s\n", e)
		}
	case ok:
		fmt.Fprintf(&b, "engine %s has no engine-specific options here\n", name)
	default:
		why := refusedEngines[name]
		if why == "" {
			why = "unknown engine"
		}
		fmt.Fprintf(&b, "fio: engine %s not loadable: %s\n", name, why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
