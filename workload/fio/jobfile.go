package fio

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// parseJobFile parses fio's INI job-file syntax: [global] and [job]
// sections, key=value or bare-key lines, whole-line ';' and '#' comments,
// and ${VAR} environment expansion as fio does. Options outside any section
// are an error, as in fio. Every problem is reported, each with file:line.
func parseJobFile(path, text string) ([]section, error) {
	var (
		secs []section
		errs []error
	)
	for n, raw := range strings.Split(text, "\n") {
		where := fmt.Sprintf("%s:%d", path, n+1)
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			name, err := sectionName(line)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			secs = append(secs, section{name: name, global: name == "global", where: where})
			continue
		}
		if len(secs) == 0 {
			errs = append(errs, fmt.Errorf("%s: option %q is outside of any [section]", where, line))
			continue
		}
		st := lineSetting(line, where)
		cur := &secs[len(secs)-1]
		cur.settings = append(cur.settings, st)
	}
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
	if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != ';' && rest[0] != '#' {
		return "", fmt.Errorf("text %q after section header", rest)
	}
	return name, nil
}

// lineSetting reads "key=value" or a bare "key", expanding ${VAR}.
func lineSetting(line, where string) setting {
	name, value, set := strings.Cut(line, "=")
	return setting{
		name:  strings.TrimSpace(name),
		value: expandEnv(strings.TrimSpace(value)),
		set:   set,
		where: where,
	}
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
