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

// parseSize reads a byte count such as "4k", "1G", "512", "0x1000".
func parseSize(s string) (uint64, error) {
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
// in seconds, as in fio's runtime, ramp_time and startdelay.
func parseTime(s string) (time.Duration, error) {
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
