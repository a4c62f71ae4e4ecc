package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeMult maps a size suffix (lower case) to its multiplier, as fio 3.33
// reads them with its default kb_base=1024: k, kb, m, ... are powers of
// 1024 ("4k" is 4096 bytes), and the IEC names kib, mib, ... are powers of
// 1000 ("4KiB" is 4000: fio's "opposite units", kept for old job files;
// fio --debug=parse prints out=4000 for size=4KiB).
var sizeMult = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1e3,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1e6,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1e9,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1e12,
	"p": 1 << 50, "pb": 1 << 50, "pib": 1e15,
}

// parseSize reads a byte count such as "4k", "1G", "512", "0x1000", or an
// arithmetic expression of them in parentheses ("(1024*1k)"; "8*$mb_memory"
// is one once expandValue has replaced the keyword). A tail fio ignores is taken where fio reads the
// same value and drops nothing meant ("65536)"); see fionum.go.
func parseSize(s string) (uint64, error) {
	if isExpr(s) {
		if err := bareExpr(s, true, false); err != nil {
			return 0, err
		}
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
	n, rest, err := sizeHead(s)
	fv, pct, fok := fioValue(s, true, false)
	switch {
	case err == nil && meaningless(rest) && fok && !pct && fv >= 0 && uint64(fv) == n:
		return n, nil
	case fok && !pct && fv >= 0 && !strings.HasPrefix(strings.TrimSpace(s), "-"):
		return 0, fioReadsOtherwise(s, strconv.FormatInt(fv, 10))
	case err == nil:
		return 0, fmt.Errorf("%q is not a size (want a number with optional k/m/g/t/p suffix, base 1024)", s)
	}
	return 0, err
}

// parseSizeTerm reads one number with an optional size suffix and nothing
// after it.
func parseSizeTerm(s string) (uint64, error) {
	n, rest, err := sizeHead(s)
	if err == nil && rest != "" {
		err = fmt.Errorf("%q is not a size (want a number with optional k/m/g/t/p suffix, base 1024)", s)
	}
	return n, err
}

// sizeHead reads a number (decimal, or hex after 0x, which takes no unit
// in fio) and the unit right after it; rest is what follows.
func sizeHead(s string) (n uint64, rest string, err error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "+")
	num, after := splitNumber(t)
	base, unit := 10, ""
	if strings.HasPrefix(num, "0x") || strings.HasPrefix(num, "0X") {
		base, num = 16, num[2:]
	} else {
		i := 0
		for i < len(after) && isAlpha(after[i]) {
			i++
		}
		unit, after = after[:i], after[i:]
	}
	mult, ok := sizeMult[strings.ToLower(unit)]
	if num == "" || !ok {
		return 0, "", fmt.Errorf("%q is not a size (want a number with optional k/m/g/t/p suffix, base 1024)", s)
	}
	n, err = strconv.ParseUint(num, base, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q is not a size: %w", s, err)
	}
	if n > math.MaxUint64/mult {
		return 0, "", fmt.Errorf("%q is too large", s)
	}
	return n * mult, after, nil
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

// timeMult maps a time suffix to its unit: fio 3.33's (get_mult_time, and
// its expression lexer), where "sec", "min" and "ns" are no units (fio
// reads "10sec" as 10 µs; such values are refused, naming fio's reading).
var timeMult = map[string]time.Duration{
	"us": time.Microsecond, "usec": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond,
	"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// parseTime reads a duration such as "20", "500ms", "2m"; a bare number is
// in seconds, as in fio's runtime, ramp_time and startdelay. In an
// arithmetic expression a bare number is in microseconds, as fio's HOWTO
// says of expressions.
func parseTime(s string) (time.Duration, error) {
	return parseTimeIn(s, time.Second)
}

// parseTimeIn reads a duration whose bare numbers are in unit (seconds or
// microseconds, fio's is_seconds); a tail fio ignores is taken where fio
// reads the same time and drops nothing meant ("10)", "5ms;").
func parseTimeIn(s string, unit time.Duration) (time.Duration, error) {
	if isExpr(s) {
		if err := bareExpr(s, false, unit == time.Second); err != nil {
			return 0, err
		}
		v, err := evalExpr(s, func(t string) (float64, error) {
			if _, suffix := splitNumber(t); suffix == "" {
				return strconv.ParseFloat(t, 64)
			}
			d, err := parseTimeTerm(t, time.Microsecond)
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
	d, rest, err := timeHead(s, unit)
	fv, _, fok := fioValue(s, false, unit == time.Second)
	if fv > math.MaxInt64/int64(time.Microsecond) || fv < 0 {
		fok = false // beyond a Duration; fio's reading is no time either
	}
	switch {
	case err == nil && meaningless(rest) && fok && time.Duration(fv)*time.Microsecond == d:
		return d, nil
	case fok && !strings.HasPrefix(strings.TrimSpace(s), "-"):
		return 0, fioReadsOtherwise(s, time.Duration(fv*int64(time.Microsecond)).String())
	case err == nil:
		return 0, fmt.Errorf("%q is not a time (want a number with optional us/ms/s/m/h/d suffix)", s)
	}
	return 0, err
}

// parseTimeTerm reads one number with an optional time suffix and nothing
// after it; bare numbers are in unit.
func parseTimeTerm(s string, unit time.Duration) (time.Duration, error) {
	d, rest, err := timeHead(s, unit)
	if err == nil && rest != "" {
		err = fmt.Errorf("%q is not a time (want a number with optional us/ms/s/m/h/d suffix)", s)
	}
	return d, err
}

// timeHead reads a decimal number and the unit right after it.
func timeHead(s string, unit time.Duration) (d time.Duration, rest string, err error) {
	num, after := splitNumber(strings.TrimPrefix(strings.TrimSpace(s), "+"))
	i := 0
	for i < len(after) && isAlpha(after[i]) {
		i++
	}
	if i > 0 {
		u, ok := timeMult[strings.ToLower(after[:i])]
		if !ok {
			return 0, "", fmt.Errorf("%q is not a time (want a number with optional us/ms/s/m/h/d suffix)", s)
		}
		unit = u
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || num == "" {
		return 0, "", fmt.Errorf("%q is not a time", s)
	}
	if n > int64(math.MaxInt64/unit) {
		return 0, "", fmt.Errorf("%q is too long", s)
	}
	return time.Duration(n) * unit, after[i:], nil
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
		if err := bareExpr(s, true, false); err != nil {
			return 0, err
		}
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
