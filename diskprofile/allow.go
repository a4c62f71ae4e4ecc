package diskprofile

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Allow is what a worker's operator lets runs throttle (`worker
// --allow-disk loop,/dev/sdb`): "loop" for loop filesystems the worker
// makes in its data directory, device paths, or "all" (loop filesystems
// and any device but the root filesystem's). The zero value allows none.
type Allow struct {
	all, loop bool
	devices   []string
}

// ParseAllow parses --allow-disk values, comma-separated or repeated.
func ParseAllow(items []string) (Allow, error) {
	var a Allow
	for _, item := range items {
		for _, v := range strings.Split(item, ",") {
			switch v = strings.TrimSpace(v); {
			case v == "":
			case v == "all":
				a.all = true
			case v == "loop":
				a.loop = true
			case filepath.IsAbs(v) && filepath.Clean(v) == v:
				a.devices = append(a.devices, v)
			default:
				return Allow{}, fmt.Errorf("--allow-disk %q: want loop, all or a device path such as /dev/sdb", v)
			}
		}
	}
	return a, nil
}

// AllowAll allows loop filesystems and every device but the root's.
func AllowAll() Allow { return Allow{all: true} }

// Empty reports whether nothing is allowed.
func (a Allow) Empty() bool { return !a.all && !a.loop && len(a.devices) == 0 }

// Loop reports whether loop filesystems are allowed.
func (a Allow) Loop() bool { return a.all || a.loop }

// Devices are the device paths allowed by name.
func (a Allow) Devices() []string { return slices.Clone(a.devices) }

// String is the list as --allow-disk takes it.
func (a Allow) String() string {
	var out []string
	if a.all {
		out = append(out, "all")
	}
	if a.loop {
		out = append(out, "loop")
	}
	return strings.Join(append(out, a.devices...), ",")
}
