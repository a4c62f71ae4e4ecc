package fio

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

const cmdLine = "command line"

// maxJobs is fio 3.33's REAL_MAX_JOBS: no more clones than this in one run.
const maxJobs = 4096

// Action is what a fio command line asks for.
type Action int

// Actions other than running jobs print something and exit, as fio does.
const (
	ActionRun       Action = iota
	ActionVersion          // --version
	ActionHelp             // --help
	ActionCmdHelp          // --cmdhelp[=OPT]
	ActionEngHelp          // --enghelp[=ENGINE]
	ActionShowCmd          // --showcmd: job files as command-line options
	ActionParseOnly        // --parse-only
	ActionInflate          // --inflate-log=FILE
)

// Command is a parsed fio command line: the jobs, and fio's own flags that
// are not job options (what to print, how often).
type Command struct {
	Spec   *fiov1.Spec
	Action Action
	// Arg is --cmdhelp's or --enghelp's argument ("" = all), or
	// --inflate-log's file.
	Arg string
	// ShowCmd is --showcmd's text, one line per job file.
	ShowCmd string
	// Eta is --eta (always, never, auto); EtaNewline --eta-newline,
	// EtaInterval --eta-interval, StatusInterval --status-interval (0 =
	// not given).
	Eta                                     string
	EtaNewline, EtaInterval, StatusInterval time.Duration
}

// cliFlag is one of fio's command-line flags that is not a job option.
type cliFlag struct {
	arg   int // noArg, needsArg, optArg (getopt's has_arg)
	apply func(c *Command, p *cliState, v string) error
	// refuse, when set, says why the flag cannot apply here.
	refuse string
}

const (
	noArg = iota
	needsArg
	optArg
)

// cliState is what parsing gathers besides the Command.
type cliState struct {
	sections []string
	readonly bool
}

// cliFlags are fio 3.33's own flags (init.c's l_opts), by name.
var cliFlags = map[string]cliFlag{
	"output":        {arg: needsArg, apply: func(c *Command, _ *cliState, v string) error { c.Spec.Output = v; return nil }},
	"output-format": {arg: needsArg, apply: func(c *Command, _ *cliState, v string) error { return setOutputFormat(c.Spec, v) }},
	"minimal": {arg: noArg, apply: func(c *Command, _ *cliState, _ string) error {
		c.Spec.OutputFormats = []fiov1.OutputFormat{fiov1.OutputFormat_OUTPUT_FORMAT_TERSE}
		c.Spec.OutputFormat = fiov1.OutputFormat_OUTPUT_FORMAT_TERSE
		return nil
	}},
	"terse-version":   {arg: needsArg, apply: setTerseVersion},
	"version":         {arg: noArg, apply: action(ActionVersion)},
	"help":            {arg: noArg, apply: action(ActionHelp)},
	"cmdhelp":         {arg: optArg, apply: func(c *Command, _ *cliState, v string) error { c.Action, c.Arg = ActionCmdHelp, v; return nil }},
	"enghelp":         {arg: optArg, apply: func(c *Command, _ *cliState, v string) error { c.Action, c.Arg = ActionEngHelp, v; return nil }},
	"showcmd":         {arg: noArg, apply: action(ActionShowCmd)},
	"parse-only":      {arg: noArg, apply: action(ActionParseOnly)},
	"eta":             {arg: needsArg, apply: setEta},
	"eta-newline":     {arg: needsArg, apply: durationFlag(func(c *Command) *time.Duration { return &c.EtaNewline })},
	"eta-interval":    {arg: needsArg, apply: durationFlag(func(c *Command) *time.Duration { return &c.EtaInterval })},
	"status-interval": {arg: needsArg, apply: durationFlag(func(c *Command) *time.Duration { return &c.StatusInterval })},
	"readonly":        {arg: noArg, apply: func(_ *Command, p *cliState, _ string) error { p.readonly = true; return nil }},
	"section": {arg: needsArg, apply: func(_ *Command, p *cliState, v string) error {
		if v == "global" {
			return errors.New("can't use global as only section")
		}
		p.sections = append(p.sections, v)
		return nil
	}},
	// fio 3.33 parses and ignores these two: it has no job table to size
	// ("we don't track/need this anymore") and no smalloc pool here.
	"max-jobs":   {arg: needsArg, apply: uintFlag(1, maxJobs)},
	"alloc-size": {arg: needsArg, apply: uintFlag(1, 1<<40)},
	// Parser warnings: every problem is already an error here.
	"warnings-fatal": {arg: noArg, apply: func(*Command, *cliState, string) error { return nil }},
	// Where fio keeps state files (verify state); writepath writes none.
	"aux-path": {arg: needsArg, apply: func(*Command, *cliState, string) error { return nil }},

	"debug":               {arg: needsArg, refuse: "fio's debug tracing of its own internals has no equivalent here"},
	"server":              {arg: optArg, refuse: "use `writepath worker` and `writepath run fio --coordinator ADDR` for remote jobs"},
	"client":              {arg: needsArg, refuse: "use `writepath run fio --coordinator ADDR --select ...` for remote jobs"},
	"daemonize":           {arg: needsArg, refuse: "use `writepath worker` (a systemd unit in deploy/) as the backend"},
	"remote-config":       {arg: needsArg, refuse: "job files are read where `writepath run fio` runs and sent to the workers"},
	"idle-prof":           {arg: needsArg, refuse: "CPU idleness profiling is not implemented"},
	"inflate-log":         {arg: needsArg, apply: func(c *Command, _ *cliState, v string) error { c.Action, c.Arg = ActionInflate, v; return nil }},
	"trigger-file":        {arg: needsArg, refuse: "triggers run commands on the load host; not offered"},
	"trigger-timeout":     {arg: needsArg, refuse: "triggers run commands on the load host; not offered"},
	"trigger":             {arg: needsArg, refuse: "triggers run commands on the load host; not offered"},
	"trigger-remote":      {arg: needsArg, refuse: "triggers run commands on the load host; not offered"},
	"cpuclock-test":       {arg: noArg, refuse: "writepath reads CLOCK_MONOTONIC; there is no CPU clock to test"},
	"crctest":             {arg: optArg, refuse: "checksum speed tests are not offered"},
	"merge-blktrace-only": {arg: noArg, refuse: "blktrace replay is not supported"},
	"bandwidth-log":       {arg: noArg, refuse: "aggregate bandwidth logs are not written; use write_bw_log per job"},
}

func action(a Action) func(*Command, *cliState, string) error {
	return func(c *Command, _ *cliState, _ string) error { c.Action = a; return nil }
}

func uintFlag(lo, hi uint64) func(*Command, *cliState, string) error {
	return func(_ *Command, _ *cliState, v string) error { _, err := parseUint(v, lo, hi); return err }
}

func durationFlag(field func(*Command) *time.Duration) func(*Command, *cliState, string) error {
	return func(c *Command, _ *cliState, v string) error {
		// fio's eta/status intervals are times in seconds unless suffixed.
		d, err := parseTime(v)
		if err != nil {
			return err
		}
		if d < time.Second && d != 0 {
			return fmt.Errorf("%q: minimum is 1s", v)
		}
		*field(c) = d
		return nil
	}
}

func setEta(c *Command, _ *cliState, v string) error {
	switch v {
	case "always", "never", "auto":
		c.Eta = v
		return nil
	}
	return fmt.Errorf("%q: want always, never or auto", v)
}

func setTerseVersion(c *Command, _ *cliState, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 || n > 5 {
		return fmt.Errorf("%q: bad terse version format (want 2, 3, 4 or 5)", v)
	}
	c.Spec.TerseVersion = uint32(n)
	return nil
}

// ParseArgs reads fio's own command-line syntax into a spec to run: see
// ParseCommand. A command line that asks for anything but running jobs
// (--version, --help, --showcmd ...) is an error here.
func ParseArgs(args []string) (*fiov1.Spec, error) {
	c, err := ParseCommand(args)
	if err != nil {
		return nil, err
	}
	if c.Action != ActionRun {
		return nil, fmt.Errorf("%s: %s prints and exits; it has no jobs to run", cmdLine, args)
	}
	return c.Spec, nil
}

// ParseCommand reads fio's own command-line syntax: --option=value (or
// --option value, or fio's single-dash -option), --name=<job> starting a
// new job (options before the first --name, and --name=global, are
// global), fio's own flags (cliFlags) and job file paths. Job files are
// read after the command line, as fio does, so command-line globals apply
// to their jobs too; each job file after the first starts with a stonewall
// (fio separates job files so). Every problem is reported at once.
func ParseCommand(args []string) (*Command, error) {
	c := &Command{Spec: &fiov1.Spec{}, Eta: "auto"}
	p := &cliState{}
	b := newBuilder()
	var files []string
	cur := &section{name: "global", global: true, where: cmdLine}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			files = append(files, a)
			continue
		}
		st := splitArg(a)
		if f, ok := cliFlags[st.name]; ok {
			if f.arg == needsArg && !st.set && i+1 < len(args) {
				i++
				st.value, st.set = args[i], true
			}
			b.errs = appendErr(b.errs, applyFlag(c, p, f, st))
			continue
		}
		if !st.set && wantsValue(st.name) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			st.value, st.set = args[i], true
		}
		st.value = expandValue(st.value)
		if st.name == "name" {
			b.add(*cur)
			cur = &section{name: st.value, global: st.value == "global", where: cmdLine}
			if !cur.global {
				// fio lists the name among a command-line job's options.
				cur.settings = append(cur.settings, st)
			}
			continue
		}
		cur.settings = append(cur.settings, st)
	}
	b.add(*cur)
	if c.Action != ActionRun && c.Action != ActionShowCmd && c.Action != ActionParseOnly {
		return c, nil // fio prints help or its version before reading any job
	}
	var show []string
	for n, f := range files {
		secs, err := readJobFile(f)
		if err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		secs = selectSections(secs, p.sections)
		show = append(show, showCmd(secs))
		first := true
		for _, s := range secs {
			if n > 0 && first && !s.global {
				s.settings = append([]setting{{name: "stonewall", where: s.where}}, s.settings...)
				first = false
			}
			b.add(s)
		}
	}
	c.ShowCmd = strings.Join(show, "")
	if c.Action == ActionShowCmd {
		return c, errors.Join(b.errs...)
	}
	b.readonly = p.readonly
	spec, err := b.finish(c.Spec)
	if err != nil {
		return nil, err
	}
	if c.Action == ActionRun {
		// --parse-only accepts what fio accepts; a run refuses what it
		// cannot honour before any I/O.
		if err := checkRunnable(spec.Jobs); err != nil {
			return nil, err
		}
	}
	c.Spec = spec
	return c, nil
}

func applyFlag(c *Command, p *cliState, f cliFlag, st setting) error {
	if f.refuse != "" {
		return fmt.Errorf("%s: --%s: %w: %s", cmdLine, st.name, ErrUnsupported, f.refuse)
	}
	if f.arg == needsArg && !st.set {
		return fmt.Errorf("%s: --%s: %w: it needs a value (--%s=...)", cmdLine, st.name, ErrInvalidValue, st.name)
	}
	if f.arg == noArg && st.set {
		return fmt.Errorf("%s: --%s takes no value (got %q)", cmdLine, st.name, st.value)
	}
	if err := f.apply(c, p, st.value); err != nil {
		return fmt.Errorf("%s: --%s=%s: %w: %v", cmdLine, st.name, st.value, ErrInvalidValue, err)
	}
	return nil
}

// selectSections keeps the global sections and, when --section was given,
// only the job sections it names (fio's skip_this_section).
func selectSections(secs []section, names []string) []section {
	if len(names) == 0 {
		return secs
	}
	var out []section
	for _, s := range secs {
		if s.global || contains(names, s.name) {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// showCmd renders sections as fio's --showcmd does: "fio ", then each
// global option, "--name=JOB " and the job's options, as --opt=value (or
// "--opt " for a bare flag), one line per job file.
func showCmd(secs []section) string {
	var b strings.Builder
	b.WriteString("fio ")
	for _, s := range secs {
		if !s.global {
			fmt.Fprintf(&b, "--name=%s ", s.name)
		}
		for _, st := range s.settings {
			if st.name == "name" {
				continue
			}
			if !st.set {
				fmt.Fprintf(&b, "--%s ", st.name)
				continue
			}
			delim := ""
			if st.name == "description" {
				delim = `"`
			}
			fmt.Fprintf(&b, "--%s=%s%s%s ", st.name, delim, st.value, delim)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// splitArg splits "--bs=4k" (or fio's single-dash "-bs=4k") into a setting.
func splitArg(a string) setting {
	a = strings.TrimLeft(a, "-")
	name, value, set := strings.Cut(a, "=")
	return setting{name: name, value: value, set: set, where: cmdLine}
}

// wantsValue reports whether "--name value" takes the next argument as the
// value, as fio's getopt does for options with a required argument.
func wantsValue(name string) bool {
	o, ok := options[name]
	return ok && !o.flag
}

var formatNames = map[string]fiov1.OutputFormat{
	"normal": fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL,
	"json":   fiov1.OutputFormat_OUTPUT_FORMAT_JSON,
	"json+":  fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS,
	"terse":  fiov1.OutputFormat_OUTPUT_FORMAT_TERSE,
}

// setOutputFormat reads --output-format's comma list, as fio's
// parse_output_format: every format named is printed, in fio's fixed
// order (terse, json/json+, normal), whatever the order given.
func setOutputFormat(spec *fiov1.Spec, v string) error {
	var fs []fiov1.OutputFormat
	for _, name := range strings.Split(v, ",") {
		f, ok := formatNames[strings.TrimSpace(name)]
		if !ok {
			return fmt.Errorf("%q: want a comma list of normal, json, json+ and terse", name)
		}
		if f == fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS {
			// json+ is json with bins: one JSON document, never two.
			fs = removeFormat(fs, fiov1.OutputFormat_OUTPUT_FORMAT_JSON)
		} else if f == fiov1.OutputFormat_OUTPUT_FORMAT_JSON && hasFormat(fs, fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS) {
			continue
		}
		if !hasFormat(fs, f) {
			fs = append(fs, f)
		}
	}
	rank := map[fiov1.OutputFormat]int{fiov1.OutputFormat_OUTPUT_FORMAT_TERSE: 0,
		fiov1.OutputFormat_OUTPUT_FORMAT_JSON: 1, fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS: 1,
		fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL: 2}
	sort.SliceStable(fs, func(i, j int) bool { return rank[fs[i]] < rank[fs[j]] })
	spec.OutputFormats = fs
	spec.OutputFormat = fs[0]
	return nil
}

func hasFormat(fs []fiov1.OutputFormat, f fiov1.OutputFormat) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

func removeFormat(fs []fiov1.OutputFormat, f fiov1.OutputFormat) []fiov1.OutputFormat {
	out := fs[:0]
	for _, x := range fs {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

// readJobFile opens and parses a job file.
func readJobFile(path string) ([]section, error) {
	text, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	return parseJobFile(path, text)
}
