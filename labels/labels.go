// Package labels parses and bounds worker labels (`--label k=v`) and
// selectors (`--select k=v`, the `groups:` of a campaign): the CLI parses
// with it and the coordinator checks every Hello and selector with it, so
// the limits are the same on both ends.
package labels

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/writepath/writepath/internal/echo"
)

// Limits on one label set (a worker's labels, a selector).
const (
	// MaxPairs bounds how many pairs one worker or selector carries.
	MaxPairs = 32
	// MaxKey bounds a key, in bytes.
	MaxKey = 63
	// MaxValue bounds a value, in bytes.
	MaxValue = 255
)

// Parse turns k=v strings into a map, checked as Check does. flag names
// the source in errors ("--label", "--select", "group nvme").
func Parse(kvs []string, flag string) (map[string]string, error) {
	if len(kvs) > MaxPairs {
		return nil, fmt.Errorf("%s: %d pairs, the limit is %d", flag, len(kvs), MaxPairs)
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %s: want key=value", flag, echo.Quote(kv))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s %s: key %s given twice", flag, echo.Quote(kv), echo.Quote(k))
		}
		if err := checkPair(k, v); err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, echo.Quote(kv), err)
		}
		out[k] = v
	}
	return out, nil
}

// Check bounds a label set that arrived whole (a Hello, a RunSpec
// selector). what names it in errors.
func Check(what string, m map[string]string) error {
	if len(m) > MaxPairs {
		return fmt.Errorf("%s: %d pairs, the limit is %d", what, len(m), MaxPairs)
	}
	for k, v := range m {
		if k == "" {
			return fmt.Errorf("%s: an empty key", what)
		}
		if err := checkPair(k, v); err != nil {
			return fmt.Errorf("%s %s=%s: %w", what, echo.Quote(k), echo.Quote(v), err)
		}
	}
	return nil
}

func checkPair(k, v string) error {
	switch {
	case len(k) > MaxKey:
		return fmt.Errorf("key of %d bytes, the limit is %d", len(k), MaxKey)
	case len(v) > MaxValue:
		return fmt.Errorf("value of %d bytes, the limit is %d", len(v), MaxValue)
	case strings.Contains(k, "="):
		return fmt.Errorf("'=' in the key")
	case !printable(k) || !printable(v):
		return fmt.Errorf("a control character or invalid UTF-8")
	}
	return nil
}

// printable: valid UTF-8 without control characters (a label is shown in
// tables and reports, and a newline in one would forge a line).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsControl)
}
