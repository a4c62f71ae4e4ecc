package fio

import (
	"fmt"
	"os"
	"strings"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

const cmdLine = "command line"

// ParseArgs reads fio's own command-line syntax: --option=value (or
// --option value), --name=<job> starting a new job (options before the first
// --name, and --name=global, are global), --output-format and --output, and
// job file paths. Job files are read after the command line, as fio does,
// so command-line globals apply to their jobs too. Every problem is
// reported at once.
func ParseArgs(args []string) (*fiov1.Spec, error) {
	spec := &fiov1.Spec{}
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
		if !st.set && wantsValue(st.name) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			st.value, st.set = args[i], true
		}
		switch st.name {
		case "output-format":
			b.errs = appendErr(b.errs, setOutputFormat(spec, st))
		case "output":
			spec.Output = st.value
		case "name":
			b.add(*cur)
			cur = &section{name: st.value, global: st.value == "global", where: cmdLine}
			if !cur.global {
				// fio lists the name among a command-line job's options.
				cur.settings = append(cur.settings, st)
			}
		default:
			cur.settings = append(cur.settings, st)
		}
	}
	b.add(*cur)
	for _, f := range files {
		secs, err := readJobFile(f)
		if err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		for _, s := range secs {
			b.add(s)
		}
	}
	return b.finish(spec)
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
	if name == "output-format" || name == "output" {
		return true
	}
	o, ok := options[name]
	return ok && !o.flag
}

func setOutputFormat(spec *fiov1.Spec, st setting) error {
	switch st.value {
	case "normal":
		spec.OutputFormat = fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL
	case "json":
		spec.OutputFormat = fiov1.OutputFormat_OUTPUT_FORMAT_JSON
	case "json+":
		spec.OutputFormat = fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS
	default:
		return fmt.Errorf("%s: option output-format=%s: %w: want normal, json or json+", cmdLine, st.value, ErrInvalidValue)
	}
	return nil
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

// readJobFile opens and parses a job file.
func readJobFile(path string) ([]section, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("job file %s: %w", path, err)
	}
	return parseJobFile(path, string(data))
}
