package diskprofile

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Spec is a profile and where it applies: a device the worker may use, or
// a loop-backed filesystem in the worker's data directory.
type Spec struct {
	Profile
	// Device is a block device (/dev/sdb); empty means a loop filesystem.
	Device string
	// FS is the loop filesystem, when Device is empty.
	FS LoopFS
}

// LoopFS is a filesystem on a loop device over an image file in the data
// directory, mounted at Dir (relative to the data directory).
type LoopFS struct {
	Dir          string   // mount point inside the data dir; default DefaultDir
	Type         string   // ext4 or xfs; default ext4
	Size         int64    // image size in bytes; default DefaultSize
	MountOptions []string // mount -o
}

// Defaults of a loop filesystem.
const (
	DefaultDir  = "disk"
	DefaultType = "ext4"
	DefaultSize = 4 << 30
	MinSize     = 64 << 20
	MaxSize     = 1 << 40
)

// Filesystems a loop filesystem may be made with.
var filesystems = []string{"ext4", "xfs"}

func (f LoopFS) withDefaults() LoopFS {
	if f.Dir == "" {
		f.Dir = DefaultDir
	}
	if f.Type == "" {
		f.Type = DefaultType
	}
	if f.Size == 0 {
		f.Size = DefaultSize
	}
	return f
}

var mountOpt = regexp.MustCompile(`^[a-z0-9_]+(=[A-Za-z0-9_.:/-]+)?$`)

// validate checks the filesystem's fields, not the host.
func (f LoopFS) validate() []string {
	var errs []string
	f = f.withDefaults()
	if filepath.IsAbs(f.Dir) || filepath.Clean(f.Dir) != f.Dir || f.Dir == "." || strings.HasPrefix(f.Dir, "..") || strings.HasPrefix(f.Dir, ".") {
		errs = append(errs, fmt.Sprintf("dir %q must be a plain relative path inside the data directory", f.Dir))
	}
	if !contains(filesystems, f.Type) {
		errs = append(errs, fmt.Sprintf("fs %q is not one of %s", f.Type, strings.Join(filesystems, ", ")))
	}
	if f.Size < MinSize || f.Size > MaxSize {
		errs = append(errs, fmt.Sprintf("size %d is outside %d MiB .. %d GiB", f.Size, MinSize>>20, MaxSize>>30))
	}
	for _, o := range f.MountOptions {
		if !mountOpt.MatchString(o) || o == "remount" || o == "bind" || o == "loop" {
			errs = append(errs, fmt.Sprintf("mount option %q is not a filesystem option", o))
		}
	}
	return errs
}

// Validate checks every field; every problem is on the one line.
func (s Spec) Validate() error {
	var errs []string
	if err := s.Profile.Validate(); err != nil {
		errs = append(errs, strings.TrimPrefix(err.Error(), "disk profile "+s.Name+": "))
	}
	if s.Device != "" {
		if !filepath.IsAbs(s.Device) || filepath.Clean(s.Device) != s.Device {
			errs = append(errs, fmt.Sprintf("device %q must be an absolute path such as /dev/sdb", s.Device))
		}
	} else {
		errs = append(errs, s.FS.validate()...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("disk profile %s: %s", s.Name, strings.Join(errs, "; "))
	}
	return nil
}

// WithDefaults fills the filesystem's defaults.
func (s Spec) WithDefaults() Spec {
	if s.Device == "" {
		s.FS = s.FS.withDefaults()
	}
	return s
}

// ParseSpec parses the --disk syntax: a built-in name or "custom", then
// comma-separated key=value overrides:
//
//	capacity
//	capacity,bucket=50000,fs=xfs,size=8G,dir=cloud,mount=noatime+nodiratime
//	custom,baseline_iops=3000,baseline_mbps=125,burst_iops=6000,bucket=300000
//	gp3,device=/dev/sdb
//
// Keys: baseline_iops, baseline_mbps (MB/s, 10^6), burst_iops, burst_mbps,
// bucket (I/O credits), refill (credits/s), credits (starting balance),
// latency (a duration), device, dir, fs, size (K, M, G, T: powers of
// 1024), mount (options joined by +). The result is validated.
func ParseSpec(s string) (Spec, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	name := strings.TrimSpace(parts[0])
	var sp Spec
	if p, ok := Builtin(name); ok {
		sp.Profile = p
	} else if name == "custom" {
		sp.Profile = Profile{Name: "custom", Credits: -1}
	} else {
		return Spec{}, fmt.Errorf("disk profile %q: not a built-in (%s) or custom", name, strings.Join(BuiltinNames(), ", "))
	}
	var errs []string
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			errs = append(errs, fmt.Sprintf("%q: want key=value", kv))
			continue
		}
		if err := sp.set(k, v); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return Spec{}, fmt.Errorf("disk profile %s: %s", name, strings.Join(errs, "; "))
	}
	if name != "custom" && len(parts) > 1 {
		sp.Source += " (overridden)"
	}
	return sp, sp.Validate()
}

// Keys ParseSpec and campaign specs accept.
var Keys = []string{"baseline_iops", "baseline_mbps", "burst_iops", "burst_mbps", "bucket", "refill", "credits",
	"latency", "device", "dir", "fs", "size", "mount"}

// set applies one key.
func (s *Spec) set(k, v string) error {
	v = strings.TrimSpace(v)
	switch k {
	case "baseline_iops":
		return parseInt(k, v, &s.BaselineIOPS)
	case "burst_iops":
		return parseInt(k, v, &s.BurstIOPS)
	case "bucket":
		return parseInt(k, v, &s.Bucket)
	case "refill":
		return parseInt(k, v, &s.Refill)
	case "credits":
		if err := parseInt(k, v, &s.Credits); err != nil {
			return err
		}
		if s.Credits < 0 {
			return fmt.Errorf("credits %d is negative", s.Credits)
		}
	case "baseline_mbps":
		return parseMBps(k, v, &s.BaselineBPS)
	case "burst_mbps":
		return parseMBps(k, v, &s.BurstBPS)
	case "latency":
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("latency %q: want a duration such as 2ms", v)
		}
		s.Latency = d
	case "device":
		s.Device = v
	case "dir":
		s.FS.Dir = v
	case "fs":
		s.FS.Type = v
	case "size":
		n, err := ParseSize(v)
		if err != nil {
			return fmt.Errorf("size: %w", err)
		}
		s.FS.Size = n
	case "mount":
		s.FS.MountOptions = nil
		for _, o := range strings.Split(v, "+") {
			if o = strings.TrimSpace(o); o != "" {
				s.FS.MountOptions = append(s.FS.MountOptions, o)
			}
		}
	default:
		return fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(Keys, ", "))
	}
	return nil
}

// Set applies one key=value as ParseSpec does and validates the result
// (campaign axes such as disk.bucket).
func (s Spec) Set(k, v string) (Spec, error) {
	s.FS.MountOptions = append([]string(nil), s.FS.MountOptions...)
	if err := s.set(k, v); err != nil {
		return Spec{}, fmt.Errorf("disk profile %s: %w", s.Name, err)
	}
	return s, s.Validate()
}

func parseInt(k, v string, dst *int64) error {
	n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
	if err != nil {
		return fmt.Errorf("%s %q: want a whole number", k, v)
	}
	*dst = n
	return nil
}

func parseMBps(k, v string, dst *int64) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f {
		return fmt.Errorf("%s %q: want MB/s (10^6 bytes a second)", k, v)
	}
	if f > float64(MaxBPS)/1e6 {
		f = float64(MaxBPS)/1e6 + 1 // refused by Validate with the limit named
	}
	*dst = int64(f * 1e6)
	return nil
}

// ParseSize parses 4G, 512M, 1048576 (K, M, G, T are powers of 1024).
func ParseSize(v string) (int64, error) {
	mult := int64(1)
	if n := len(v); n > 0 {
		switch strings.ToUpper(v[n-1:]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		case "T":
			mult = 1 << 40
		}
		if mult > 1 {
			v = v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > MaxSize/mult {
		return 0, fmt.Errorf("%q: want a size such as 4G (at most 1T)", v)
	}
	return n * mult, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
