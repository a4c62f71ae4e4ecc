package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeMult maps a size suffix (lower case) to its multiplier. fio's default
// kb_base=1024 gives k, kb and kib alike the base-1024 meaning ("4k" is 4096
// bytes), for compatibility with old job files.
var sizeMult = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
	"p": 1 << 50, "pb": 1 << 50, "pib": 1 << 50,
}

// parseSize reads a byte count such as "4k", "1G", "512", "0x1000", or an
// arithmetic expression of them ("(1024*1k)", "8*$mb_memory" once the
// keyword is replaced).
func parseSize(s string) (uint64, error) {
	if isExpr(s) {
		v, err := evalExpr(s, func(t string) (float64, error) {
			n, err := parseSizeTerm(t)
			return float64(n), err
		})
		if err != nil {
			return 0, err
		}
		if v < 0 || v >= math.MaxUint64 {
			return 0, fmt.Errorf("%q = %g is not a size", s, v)
		}
		return uint64(v), nil
	}
	return parseSizeTerm(s)
}

// parseSizeTerm reads one number with an optional size suffix.
func parseSizeTerm(s string) (uint64, error) {
	num, suffix := splitNumber(s)
	mult, ok := sizeMult[strings.ToLower(suffix)]
	if num == "" || !ok {
		return 0, fmt.Errorf("%q is not a size (want a number with optional k/m/g/t/p suffix, base 1024)", s)
	}
	n, err := strconv.ParseUint(num, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %w", s, err)
	}
	if n > math.MaxUint64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// splitNumber splits "4k" into "4" and "k"; a 0x prefix keeps hex digits.
func splitNumber(s string) (num, suffix string) {
	s = strings.TrimSpace(s)
	i := 0
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		i = 2
		for i < len(s) && strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			i++
		}
		return s[:i], s[i:]
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// timeMult maps a time suffix to its unit.
var timeMult = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "usec": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond,
	"s": time.Second, "sec": time.Second, "m": time.Minute, "min": time.Minute,
	"h": time.Hour, "d": 24 * time.Hour,
}

// parseTime reads a duration such as "20", "500ms", "2m"; a bare number is
// in seconds, as in fio's runtime, ramp_time and startdelay. In an
// arithmetic expression a bare number is in microseconds, as fio's HOWTO
// says of expressions.
func parseTime(s string) (time.Duration, error) {
	if isExpr(s) {
		v, err := evalExpr(s, func(t string) (float64, error) {
			if _, suffix := splitNumber(t); suffix == "" {
				return strconv.ParseFloat(t, 64)
			}
			d, err := parseTimeTerm(t)
			return float64(d) / float64(time.Microsecond), err
		})
		if err != nil {
			return 0, err
		}
		v *= float64(time.Microsecond) // the expression's value is in µs
		if v < 0 || v > math.MaxInt64 {
			return 0, fmt.Errorf("%q is not a time", s)
		}
		return time.Duration(v), nil
	}
	return parseTimeTerm(s)
}

// parseTimeTerm reads one number with an optional time suffix.
func parseTimeTerm(s string) (time.Duration, error) {
	num, suffix := splitNumber(s)
	unit := time.Second
	if suffix != "" {
		u, ok := timeMult[strings.ToLower(suffix)]
		if !ok {
			return 0, fmt.Errorf("%q is not a time (want a number with optional us/ms/s/m/h/d suffix)", s)
		}
		unit = u
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("%q is not a time", s)
	}
	if n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return time.Duration(n) * unit, nil
}

// parseBool reads fio's boolean values: 1/0, and also true/false, yes/no,
// on/off.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (want 0 or 1)", s)
}

// parseUint reads a plain count within [lo, hi]; the message has fio's
// wording for out-of-range values.
func parseUint(s string, lo, hi uint64) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil && isExpr(s) {
		var v float64
		v, err = evalExpr(s, func(t string) (float64, error) { return strconv.ParseFloat(t, 64) })
		if err == nil && (v < 0 || v >= math.MaxUint64) {
			err = fmt.Errorf("%q = %g is out of range", s, v)
		}
		n = uint64(v)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if n < lo {
		return 0, fmt.Errorf("min value out of range: %d (%d min)", n, lo)
	}
	if n > hi {
		return 0, fmt.Errorf("max value out of range: %d (%d max)", n, hi)
	}
	return n, nil
}
