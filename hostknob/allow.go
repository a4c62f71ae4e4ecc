package hostknob

import (
	"fmt"
	"slices"
	"strings"
)

// Allow is the set of knobs a worker's operator lets runs change
// (`worker --allow-host scheduler,nr_requests` or `all`). The zero value
// allows none.
type Allow struct {
	all   bool
	names map[string]bool
}

// AllowAll allows every knob.
func AllowAll() Allow { return Allow{all: true} }

// ParseAllow parses --allow-host values: knob names, comma-separated or
// repeated, or "all". An unknown name is an error, so a typo does not
// silently allow nothing.
func ParseAllow(items []string) (Allow, error) {
	a := Allow{names: map[string]bool{}}
	for _, item := range items {
		for _, n := range strings.Split(item, ",") {
			n = strings.TrimSpace(n)
			switch n {
			case "":
				continue
			case "all":
				a.all = true
				continue
			}
			c, err := Canonical(n)
			if err != nil {
				return Allow{}, fmt.Errorf("--allow-host: %w", err)
			}
			a.names[c] = true
		}
	}
	return a, nil
}

// Allows reports whether the knob (canonical name) may be changed.
func (a Allow) Allows(name string) bool { return a.all || a.names[name] }

// Empty reports whether nothing is allowed.
func (a Allow) Empty() bool { return !a.all && len(a.names) == 0 }

// String is the allow-list as --allow-host takes it.
func (a Allow) String() string {
	if a.all {
		return "all"
	}
	names := make([]string, 0, len(a.names))
	for n := range a.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}
