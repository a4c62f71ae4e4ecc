package fio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxJobFile bounds a job file (and each include): fio's own lines are at
// most 4 KiB; a file this large is a mistake, not a job.
const maxJobFile = 16 << 20

// maxIncludeDepth bounds nested includes (a file that includes itself).
const maxIncludeDepth = 16

// parseJobFile parses fio's INI job-file syntax: [global] and [job]
// sections, key=value or bare-key lines, ';' and '#' comments (whole lines,
// and after a value: fio cuts a line at the first of either), "include
// FILE" inside a section (relative to the including file when not found as
// given; included files hold options only), ${VAR} environment expansion
// and the reserved words $pagesize, $mb_memory and $ncpus. Options outside
// any section are an error, as in fio. Every problem is reported, each with
// file:line.
func parseJobFile(path, text string) ([]section, error) {
	var secs []section
	errs := parseLines(path, text, &secs, 0)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// name= inside a section renames the job, as in fio.
	for i := range secs {
		for _, st := range secs[i].settings {
			if st.name == "name" && st.set {
				secs[i].name = st.value
			}
		}
	}
	return secs, nil
}

// parseLines adds text's sections (or, for an include at depth > 0, its
// options to the last section) to secs.
func parseLines(path, text string, secs *[]section, depth int) []error {
	var errs []error
	for n, raw := range strings.Split(text, "\n") {
		where := fmt.Sprintf("%s:%d", path, n+1)
		if strings.IndexByte(raw, 0) >= 0 {
			// No option value or job name may hold one (the spec refuses it
			// later, without saying where).
			errs = append(errs, fmt.Errorf("%s: a NUL byte (not a job file?)", where))
			continue
		}
		line := stripComment(raw)
		if line == "" {
			continue
		}
		if line[0] == '[' {
			if depth > 0 {
				errs = append(errs, fmt.Errorf("%s: no new sections in included files", where))
				continue
			}
			name, err := sectionName(line)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			if name != "global" && jobSections(*secs) >= MaxJobs {
				return append(errs, fmt.Errorf("%s: more than %d job sections (fio's limit of jobs)", where, MaxJobs))
			}
			*secs = append(*secs, section{name: name, global: name == "global", where: where})
			continue
		}
		if len(*secs) == 0 {
			errs = append(errs, fmt.Errorf("%s: option %q is outside of any [section]", where, line))
			continue
		}
		if inc, ok := strings.CutPrefix(line, "include "); ok {
			errs = append(errs, include(path, strings.TrimSpace(inc), where, secs, depth)...)
			continue
		}
		cur := &(*secs)[len(*secs)-1]
		cur.settings = append(cur.settings, lineSetting(line, where))
	}
	return errs
}

// include reads an included file's options into the current section.
func include(from, name, where string, secs *[]section, depth int) []error {
	if depth+1 > maxIncludeDepth {
		return []error{fmt.Errorf("%s: include %s: more than %d nested includes", where, name, maxIncludeDepth)}
	}
	path := name
	if _, err := os.Stat(path); err != nil && !filepath.IsAbs(name) {
		path = filepath.Join(filepath.Dir(from), name)
	}
	text, err := readLimited(path)
	if err != nil {
		return []error{fmt.Errorf("%s: include %s: %w", where, name, err)}
	}
	return parseLines(path, text, secs, depth+1)
}

// readLimited reads a regular file of at most maxJobFile bytes ("-" is
// standard input, as fio reads a job file named "-").
func readLimited(path string) (string, error) {
	f := os.Stdin
	if path != "-" {
		st, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("not a regular file")
		}
		if f, err = os.Open(path); err != nil {
			return "", err
		}
		defer f.Close()
	}
	b, err := io.ReadAll(io.LimitReader(f, maxJobFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxJobFile {
		return "", fmt.Errorf("larger than %d MiB", maxJobFile>>20)
	}
	return string(b), nil
}

// stripComment trims a line and cuts it at the first ';' and then the
// first '#', as fio's strip_blank_end does (so neither can appear in a
// value).
func stripComment(raw string) string {
	if i := strings.IndexByte(raw, ';'); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	return strings.TrimSpace(raw)
}

// sectionName reads "[name]".
func sectionName(line string) (string, error) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return "", fmt.Errorf("section header %q has no closing ]", line)
	}
	name := strings.TrimSpace(line[1:end])
	if name == "" {
		return "", fmt.Errorf("section header %q has no name", line)
	}
	if rest := strings.TrimSpace(line[end+1:]); rest != "" {
		return "", fmt.Errorf("text %q after section header", rest)
	}
	return name, nil
}

// lineSetting reads "key=value" or a bare "key", expanding ${VAR}.
func lineSetting(line, where string) setting {
	name, value, set := strings.Cut(line, "=")
	return setting{
		name:  strings.TrimSpace(name),
		value: expandValue(strings.TrimSpace(value)),
		set:   set,
		where: where,
	}
}

// expandValue expands ${VAR} and then fio's reserved words. A value with a
// reserved word is arithmetic to fio (its bc_calc: "8*$pagesize" is 32768),
// so it is put in parentheses, the one form evaluated here; a list or range
// (",", ":") is left as it is, each part then read alone.
func expandValue(v string) string {
	v, found := replaceKeywords(expandEnv(v))
	if found && !strings.HasPrefix(v, "(") && !strings.ContainsAny(v, ",:") && strings.ContainsAny(v, "*/+^%") {
		v = "(" + v + ")"
	}
	return v
}

// expandEnv replaces ${VAR} with the environment's value, as fio does in job
// files; a bare $ is kept, since fio only expands the braced form. Values
// are not expanded again.
func expandEnv(s string) string {
	var out strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		out.WriteString(s[:i])
		out.WriteString(os.Getenv(s[i+2 : i+j]))
		s = s[i+j+1:]
	}
	out.WriteString(s)
	return out.String()
}

// jobSections counts the sections that are jobs (not [global]).
func jobSections(secs []section) int {
	n := 0
	for _, s := range secs {
		if !s.global {
			n++
		}
	}
	return n
}
