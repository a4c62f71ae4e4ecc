package fio

import (
	"fmt"
	"math"
	"strings"
)

// fio 3.33 reads a number option (sizes, counts, times: its FIO_OPT_INT,
// ULL, STR_VAL and STR_VAL_TIME types) with strtoll and then looks only
// at the characters right after the digits for a unit; whatever follows
// is ignored without a word. So its own t/strided.py passes
// --filesize=65536) and fio runs with 65536, and "4k)" is 4096. But the
// same reading makes "4.5k" 4 bytes, "4 k" 4, "0x10k" 16, "10sec" 10 µs
// and "1.5s" one second.
//
// writepath takes such a value where nothing that could carry meaning is
// dropped: what fio ignores holds no letter or digit and fio's value is
// the one writepath reads (so "65536)" and "64k;" run as fio runs them).
// Where fio would silently read something else than the value says, the
// job is refused before it runs, naming what fio would read: measuring
// 4 bytes for "4.5k" behind the user's back would be fio's bug copied,
// and reading 4608 would be a different job than fio's.

// fioValue is what fio 3.33's str_to_decimal makes of s, and whether it
// accepts s: bytes for a size (kilo), microseconds for a time (with
// bareSec, a number without a unit is seconds). pct reports fio's '%'.
func fioValue(s string, kilo, bareSec bool) (v int64, pct, ok bool) {
	if s == "" {
		return 0, false, false
	}
	base := 10
	if strings.Contains(s, "0x") || strings.Contains(s, "0X") {
		base = 16
	}
	v, ok = strtoll(s, base)
	if !ok {
		return 0, false, false
	}
	var mult int64
	if kilo {
		mult, pct = fioMultBytes(s)
		if pct {
			return v, true, true
		}
	} else {
		mult = fioMultTime(s, bareSec)
	}
	if v != 0 && (v > math.MaxInt64/mult || v < math.MinInt64/mult) {
		return 0, false, false // C would wrap; nobody means that
	}
	return v * mult, false, true
}

// strtoll is C's, as fio calls it: leading blanks, a sign, a 0x prefix in
// base 16; ok is false where fio gives up (no digits, or overflow).
func strtoll(s string, base int) (int64, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitVal(s[i+2]) < 16 {
		i += 2
	}
	var u uint64
	digits := 0
	for ; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		digits++
		if u > (math.MaxInt64-uint64(d))/uint64(base) {
			return 0, false // ERANGE: fio refuses LONG_MAX
		}
		u = u*uint64(base) + uint64(d)
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// fioMultBytes is fio's get_mult_bytes with kb_base=1024: the unit is read
// where the leading digits (and a sign before them) end, by its first
// letters; the IEC names (kib, mib, ...) are powers of 1000 there, fio's
// "opposite units" for old job files.
func fioMultBytes(s string) (mult int64, pct bool) {
	p := 0
	if len(s) >= 2 {
		seen := false
		for p < len(s) && (isDigit(s[p]) || !seen && (s[p] == '+' || s[p] == '-')) {
			seen = seen || isDigit(s[p])
			p++
		}
		if p == len(s) || !isAlpha(s[p]) && s[p] != '%' {
			return 1, false
		}
	}
	c := strings.ToLower(s[p:])
	if i := strings.IndexAny(c, ":-,/"); i >= 0 {
		c = c[:i]
	}
	pow, unit := 0, int64(1024)
	switch {
	case strings.HasPrefix(c, "pib"), strings.HasPrefix(c, "tib"), strings.HasPrefix(c, "gib"),
		strings.HasPrefix(c, "mib"), strings.HasPrefix(c, "kib"):
		pow, unit = strings.Index("kmgtp", c[:1])+1, 1000
	case c != "" && strings.Contains("kmgtp", c[:1]):
		pow = strings.Index("kmgtp", c[:1]) + 1
	case strings.HasPrefix(c, "%"):
		return 1, true
	}
	mult = 1
	for ; pow > 0; pow-- {
		mult *= unit
	}
	return mult, false
}

// fioMultTime is fio's get_mult_time, in microseconds: after the digits,
// no letter means the option's bare unit; "us…" and "ms…" are read by
// their first two letters, s, m, h and d only when nothing follows them,
// and anything else (10sec, 10min, 10ns, 10s)) is microseconds.
func fioMultTime(s string, bareSec bool) int64 {
	p := 0
	for p < len(s) && (isDigit(s[p]) || s[p] == '+' || s[p] == '-') {
		p++
	}
	if p == len(s) || !isAlpha(s[p]) {
		if bareSec {
			return 1e6
		}
		return 1
	}
	c := strings.ToLower(s[p:])
	switch {
	case strings.HasPrefix(c, "us"):
		return 1
	case strings.HasPrefix(c, "ms"):
		return 1000
	case c == "s":
		return 1e6
	case c == "m":
		return 60e6
	case c == "h":
		return 3600e6
	case c == "d":
		return 86400e6
	}
	return 1
}

// meaningless reports whether fio's ignored tail holds nothing a person
// could have meant: no letter and no digit (")", ";", blanks).
func meaningless(tail string) bool {
	for i := 0; i < len(tail); i++ {
		if isAlpha(tail[i]) || isDigit(tail[i]) {
			return false
		}
	}
	return true
}

// fioReadsOtherwise is the refusal for a value fio 3.33 accepts and reads
// as something else than it says: accepted by --parse-only, as fio, and
// refused when the job is to run.
func fioReadsOtherwise(s, reads string) error {
	return runRefusal(fmt.Sprintf("fio 3.33 reads %q as %s, ignoring what follows the number and its unit; write the value you mean", s, reads))
}
