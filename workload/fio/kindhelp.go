package fio

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// defaultDiffers are options whose unset value here is not fio's default,
// and what it is.
var defaultDiffers = map[string]string{
	"buffer_compress_chunk": "the whole buffer",
}

// Help prints the fio kind's options (`writepath run fio --help`): every
// job option the parser takes, from its table, with fio's description and
// default, then what is refused and why.
func Help(w io.Writer) error {
	var b strings.Builder
	b.WriteString("fio: fio 3.33's job options and job files, run on every selected worker at once.\n\n" +
		"Usage:\n" +
		"  writepath run fio [run] [job options] [job file...]   on the fabric: merged lines and summary\n" +
		"  writepath fio [fio flags] [job options] [job file...]  locally, as fio: --output-format, --cmdhelp=OPT,\n" +
		"                                                         --enghelp, --showcmd, --version\n\n" +
		"Options are fio's: --option=value or --option value; those before the first --name are global;\n" +
		"a job file takes the same names as fio's INI. Defaults in brackets are fio 3.33's.\n\n" +
		"Job options:\n")
	width := 0
	for _, o := range optionTable {
		width = max(width, len(optionUsage(o)))
	}
	for _, o := range optionTable {
		fmt.Fprintf(&b, "  %-*s  %s", width, optionUsage(o), o.help)
		if al := aliasesOf(o.name); len(al) > 0 {
			fmt.Fprintf(&b, " (alias %s)", strings.Join(al, ", "))
		}
		switch d, ok := optionDefaults[o.name]; {
		case notYet[o.name]:
			b.WriteString(" (accepted; refused when run: not built yet)")
		case ok:
			fmt.Fprintf(&b, " [%s]", d)
		case defaultDiffers[o.name] != "":
			fmt.Fprintf(&b, " [%s; fio: 512]", defaultDiffers[o.name])
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\nEngines: %s.\n", strings.Join(engineList(), ", "))
	names := make([]string, 0, len(refused))
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("\nAccepted by --parse-only as fio accepts them, refused when run, with the reason (an ignored\n" +
		"option would change what is measured); so are fio 3.33's other options, its other engines and\n" +
		"their options:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, "--"+n, refused[n])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// optionUsage is how the help names an option: --name=VALUE, or
// --name[=BOOL] for one that may be given alone.
func optionUsage(o namedOption) string {
	if o.flag {
		return "--" + o.name + "[=BOOL]"
	}
	return "--" + o.name + "=VALUE"
}

// aliasesOf lists the other names of option name, sorted.
func aliasesOf(name string) []string {
	var out []string
	for a, n := range aliases {
		if n == name {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}
