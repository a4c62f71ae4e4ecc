package diskstats

import (
	"bytes"
	"fmt"
	"math"
)

// maxFields is the number of counters iostat reads after the name; newer
// kernels may print more, which are ignored (as sysstat's sscanf does).
const maxFields = 17

// Line is one parsed line of /proc/diskstats.
type Line struct {
	Name string
	Counters
}

// Parse parses a whole /proc/diskstats file. Blank lines are skipped; any
// other malformed line is an error naming its line number.
func Parse(data []byte) ([]Line, error) {
	var out []Line
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data = nextLine(data)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		name, c, err := ParseLine(line)
		if err != nil {
			return nil, fmt.Errorf("diskstats line %d: %w", n, err)
		}
		out = append(out, Line{Name: string(name), Counters: c})
	}
	return out, nil
}

// ParseLine parses one line: "major minor name" and 4, 11, 15, 17 or more
// counters. The returned name aliases line. It does not allocate.
func ParseLine(line []byte) (name []byte, c Counters, err error) {
	var tok []byte
	rest := line
	major, rest, err := uintField(rest, math.MaxUint32)
	if err != nil {
		return nil, c, fmt.Errorf("major: %w", err)
	}
	minor, rest, err := uintField(rest, math.MaxUint32)
	if err != nil {
		return nil, c, fmt.Errorf("minor: %w", err)
	}
	tok, rest = field(rest)
	if len(tok) == 0 {
		return nil, c, fmt.Errorf("missing device name: %w", ErrFormat)
	}
	c.Major, c.Minor = uint32(major), uint32(minor)
	if err := c.parseCounters(rest); err != nil {
		return nil, Counters{}, err
	}
	return tok, c, nil
}

// parseCounters reads the counters after the name into c.
func (c *Counters) parseCounters(rest []byte) error {
	n := 0
	for {
		var tok []byte
		tok, rest = field(rest)
		if len(tok) == 0 {
			break
		}
		v, ok := parseUint(tok)
		if !ok {
			return fmt.Errorf("counter %d %q: %w", n+1, tok, ErrFormat)
		}
		if n < maxFields {
			c.set(n, v)
		}
		n++
	}
	switch {
	case n >= maxFields:
		c.Fields = maxFields
	case n >= 15:
		c.Fields = 15
	case n >= 11:
		c.Fields = 11
	case n == 4:
		c.fixOldPartition()
	default:
		return fmt.Errorf("%d counters (want 4, 11, 15 or 17): %w", n, ErrFormat)
	}
	c.dropPartial()
	return nil
}

// dropPartial zeroes counters of a group the line printed only in part
// (as sysstat ignores them): 12-14 counters carry no usable discards, 16 no
// usable flushes.
func (c *Counters) dropPartial() {
	if c.Fields < 17 {
		c.FlushIOs, c.FlushTicks = 0, 0
	}
	if c.Fields < 15 {
		c.DiscardIOs, c.DiscardMerges, c.DiscardSectors, c.DiscardTicks = 0, 0, 0, 0
	}
}

// nextLine splits off the first line of data.
func nextLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// field splits off the first space-separated token of s.
func field(s []byte) (tok, rest []byte) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	return s[i:j], s[j:]
}

// uintField parses the next token as an unsigned integer no larger than max.
func uintField(s []byte, max uint64) (uint64, []byte, error) {
	tok, rest := field(s)
	v, ok := parseUint(tok)
	if !ok || v > max {
		return 0, rest, fmt.Errorf("%q: %w", tok, ErrFormat)
	}
	return v, rest, nil
}

// parseUint parses a decimal uint64 without allocating; it rejects empty
// input, signs and overflow.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, ch := range b {
		d := uint64(ch - '0')
		if d > 9 {
			return 0, false
		}
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
