package oltp

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// values holds option values as sysbench's option store does: by
// canonical name, a list of strings (a flag is on when its list is not
// empty). Options start with their defaults.
type values struct {
	v map[string][]string
	// given marks options set on the command line or in a config file.
	given map[string]bool
	// settings are --mysqld-set/--set in order (repeatable, unlike
	// sysbench's options).
	settings []string
}

func newValues() *values {
	vs := &values{v: map[string][]string{}, given: map[string]bool{}}
	for s := range sbOptions {
		for i := range sbOptions[s] {
			if opt := &sbOptions[s][i]; !opt.noDef {
				def := opt.def
				_ = vs.set(opt, &def)
				delete(vs.given, canon(opt.name))
			}
		}
	}
	return vs
}

// errBadValue is set_option's failure: a flag with a value other than
// on/off (sysbench then calls the whole argument an invalid option).
var errBadValue = errors.New("bad value")

// set stores one value (nil: given without "=") with sysbench's rules:
// a flag is on for no value, on, true or 1 and off for off, false or 0;
// an empty or missing value leaves any other option without a value; a
// list splits at commas, dropping empty items.
func (vs *values) set(opt *sbOpt, val *string) error {
	key := canon(opt.name)
	vs.given[key] = true
	if key == "mysqld_set" || key == "set" {
		if val == nil {
			return errBadValue
		}
		vs.settings = append(vs.settings, *val)
		return nil
	}
	switch {
	case opt.typ == tBool:
		switch {
		case val == nil || *val == "on" || *val == "true" || *val == "1":
			vs.v[key] = []string{"on"}
		case *val == "off" || *val == "false" || *val == "0":
			vs.v[key] = nil
		default:
			return errBadValue
		}
	case val == nil || *val == "":
		vs.v[key] = nil
	case opt.typ == tList:
		var items []string
		for _, it := range strings.Split(*val, ",") {
			if it != "" {
				items = append(items, it)
			}
		}
		vs.v[key] = items
	default:
		vs.v[key] = []string{*val}
	}
	return nil
}

func (vs *values) flag(name string) bool     { return len(vs.v[canon(name)]) > 0 }
func (vs *values) list(name string) []string { return vs.v[canon(name)] }
func (vs *values) was(name string) bool      { return vs.given[canon(name)] }

// str is the first value, "" if none.
func (vs *values) str(name string) (string, bool) {
	if l := vs.v[canon(name)]; len(l) > 0 {
		return l[0], true
	}
	return "", false
}

// invalidValue is sb_opt_to_int's complaint (on stderr, exit 1).
type invalidValue struct{ name, val string }

func (e *invalidValue) Error() string {
	return fmt.Sprintf("Invalid value for the '%s' option: '%s'", canon(e.name), e.val)
}

// integer reads an INT option as sysbench does (strtol over the whole
// value, within a C int; no value is 0).
func (vs *values) integer(name string) (int, error) {
	s, ok := vs.str(name)
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimLeft(s, " \t\n\v\f\r"), 10, 64)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, &invalidValue{name, s}
	}
	return int(n), nil
}

// size reads a SIZE option as sb_opt_to_size does: leading digits and an
// optional K, M, G or T (powers of 1024); anything else is 0.
func (vs *values) size(name string) uint64 {
	s, _ := vs.str(name)
	var n uint64
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + uint64(s[i]-'0')
	}
	if i == 0 || i == len(s) {
		return n
	}
	k := strings.IndexByte("KMGT", strings.ToUpper(s[i : i+1])[0])
	if k < 0 {
		return 0
	}
	for ; k >= 0; k-- {
		n *= 1024
	}
	return n
}

// real reads a DOUBLE option as strtod does: its longest numeric prefix
// (the last value wins, as in sb_opt_to_double).
func (vs *values) real(name string) float64 {
	l := vs.v[canon(name)]
	if len(l) == 0 {
		return 0
	}
	s := strings.TrimSpace(l[len(l)-1])
	for end := len(s); end > 0; end-- {
		if x, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return x
		}
	}
	return 0
}

// whole reads one of oltp_common.lua's numeric options, which must be a
// whole number from 0 to max: sysbench hands the value to Lua, which
// loops, indexes and draws with it, so anything else breaks it mid-run.
func (vs *values) whole(name string, max float64) (uint32, error) {
	s, _ := vs.str(name)
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || x != math.Trunc(x) || x < 0 || x > max {
		return 0, fmt.Errorf("invalid value for --%s: '%s' (want a whole number from 0 to %.0f)", name, s, max)
	}
	return uint32(x), nil
}

// readConfig applies a --config-file as sysbench's read_config does:
// "name=value[,value...]" lines, '#' starts a comment, values may be
// quoted. Options sysbench would not know yet at that point (the test's)
// are overwritten by their defaults in sysbench, so only the general
// options are taken; other names are ignored, as sysbench ignores them.
func (vs *values) readConfig(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		name, rest, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		items, err := configValues(rest)
		if err != nil {
			return fmt.Errorf("unexpected EOL on line %d", line)
		}
		opt, ok := optIndex[canon(strings.TrimSpace(name))]
		if !ok || opt.typ == tFile {
			continue
		}
		if sec, _ := optSection(opt.name); sec == secScript {
			continue
		}
		joined := strings.Join(items, ",")
		if err := vs.set(opt, &joined); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	return sc.Err()
}

// configValues splits a config line's value part: whitespace-separated or
// comma-separated items, quoted items, a '#' comment.
func configValues(s string) ([]string, error) {
	var out []string
	for s = strings.TrimLeft(s, " \t"); s != "" && s[0] != '#'; s = strings.TrimLeft(s, " \t,") {
		if q := s[0]; q == '\'' || q == '"' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return nil, errors.New("unterminated quote")
			}
			out = append(out, s[1:1+end])
			s = s[2+end:]
			if i := strings.IndexByte(s, ','); i >= 0 {
				s = s[i:]
			} else {
				s = ""
			}
			continue
		}
		end := strings.IndexAny(s, " \t,\n")
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out, nil
}
