package hostknob

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// mountOpt is one remount option, canonical.
type mountOpt struct {
	class string
	value string // as fsconfig or mount_setattr takes it: "noatime", "commit=30"
	vfs   bool   // a per-mount flag (mount_setattr), else a superblock option (fsconfig)
}

// optClass is a family of options that set one thing, with how to read
// the current value back from the mount table: an option whose value
// before cannot be read back cannot be restored, so it is refused.
type optClass struct {
	name    string
	fstypes []string // nil: any filesystem
	vfs     bool
	canon   func(o string) (string, bool)
	current func(m diskstats.Mount) string
}

var ext4Types = []string{"ext4", "ext3"}

// ext4DefaultCommit is JBD2_DEFAULT_MAX_COMMIT_AGE: ext4 shows commit= in
// the mount table only when it differs.
const ext4DefaultCommit = "commit=5"

var optClasses = []optClass{
	{name: "atime", vfs: true, canon: among("noatime", "relatime", "strictatime"),
		current: func(m diskstats.Mount) string {
			return firstOf(strings.Split(m.Options, ","), "strictatime", "noatime", "relatime")
		}},
	{name: "diratime", vfs: true, canon: among("nodiratime", "diratime"),
		current: func(m diskstats.Mount) string { return flagOf(strings.Split(m.Options, ","), "nodiratime", "diratime") }},
	{name: "lazytime", canon: among("lazytime", "nolazytime"),
		current: func(m diskstats.Mount) string { return flagOf(m.AllOptions(), "lazytime", "nolazytime") }},
	{name: "barrier", fstypes: ext4Types, canon: aliases(map[string]string{
		"barrier": "barrier", "barrier=1": "barrier", "nobarrier": "nobarrier", "barrier=0": "nobarrier"}),
		current: func(m diskstats.Mount) string { return flagOf(m.AllOptions(), "nobarrier", "barrier") }},
	{name: "commit", fstypes: ext4Types, canon: func(o string) (string, bool) {
		n, ok := strings.CutPrefix(o, "commit=")
		v, err := strconv.ParseUint(n, 10, 31)
		return "commit=" + strconv.FormatUint(v, 10), ok && err == nil
	}, current: func(m diskstats.Mount) string { return prefixed(m.AllOptions(), "commit=", ext4DefaultCommit) }},
	{name: "discard", fstypes: ext4Types, canon: among("discard", "nodiscard"),
		current: func(m diskstats.Mount) string { return flagOf(m.AllOptions(), "discard", "nodiscard") }},
	{name: "auto_da_alloc", fstypes: ext4Types, canon: among("auto_da_alloc", "noauto_da_alloc"),
		current: func(m diskstats.Mount) string { return flagOf(m.AllOptions(), "noauto_da_alloc", "auto_da_alloc") }},
	{name: "data", fstypes: ext4Types, canon: among("data=ordered", "data=writeback", "data=journal"),
		current: func(m diskstats.Mount) string { return prefixed(m.AllOptions(), "data=", "data=ordered") }},
}

// mountOptionNames lists the options the mount knob takes, for help.
func mountOptionNames() []string {
	return []string{"noatime", "relatime", "strictatime", "nodiratime", "diratime", "lazytime", "nolazytime",
		"ext4: barrier=0|1", "nobarrier", "commit=N", "discard", "nodiscard", "noauto_da_alloc", "data=MODE"}
}

// parseMountOptions splits a mount knob's value into options of known
// classes; options of no class come back apart, so the kernel can be
// asked about them first (its refusal names them better than ours).
func parseMountOptions(v, fstype string) (known []mountOpt, unknown []string, err error) {
	seen := map[string]string{}
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		switch o {
		case "":
			continue
		case "ro", "rw", "remount", "defaults":
			return nil, nil, fmt.Errorf("%w: mount option %q is not a knob (the data directory stays as mounted, rw)", ErrBadValue, o)
		}
		c, canon, ok := classOf(o, fstype)
		if !ok {
			unknown = append(unknown, o)
			continue
		}
		if prev, dup := seen[c.name]; dup {
			return nil, nil, fmt.Errorf("%w: mount options %s and %s set the same thing", ErrBadValue, prev, o)
		}
		seen[c.name] = o
		known = append(known, mountOpt{class: c.name, value: canon, vfs: c.vfs})
	}
	if len(known)+len(unknown) == 0 {
		return nil, nil, fmt.Errorf("%w: no mount option given", ErrBadValue)
	}
	return known, unknown, nil
}

func classOf(o, fstype string) (optClass, string, bool) {
	for _, c := range optClasses {
		if canon, ok := c.canon(o); ok && (c.fstypes == nil || slices.Contains(c.fstypes, fstype)) {
			return c, canon, true
		}
	}
	return optClass{}, "", false
}

func classNamed(name string) optClass {
	for _, c := range optClasses {
		if c.name == name {
			return c
		}
	}
	panic("hostknob: unknown option class " + name) // classes come from parseMountOptions
}

// mountState is the current value of each class in opts, comma-joined
// in opts' order: the knob's "before" and "read back".
func mountState(m diskstats.Mount, opts []mountOpt) string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = classNamed(o.class).current(m)
	}
	return strings.Join(out, ",")
}

// kernelParse has the filesystem parse superblock options without
// applying them (fspick + fsconfig, no reconfigure): its refusal names
// the option, and nothing changes.
func kernelParse(mountPoint string, opts []string) error {
	if len(opts) == 0 {
		return nil
	}
	fd, err := fspick(mountPoint)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for _, o := range opts {
		if err := fsSet(fd, o); err != nil {
			return fmt.Errorf("mount option %s: %w: %s", o, ErrRefused, kernelSays(fd, err))
		}
	}
	return nil
}

// remountOne applies one option to the mount at mountPoint: a per-mount
// flag with mount_setattr (this mount only, other flags untouched), a
// superblock option with its own fsconfig reconfigure, so a refusal
// names exactly the option refused.
func remountOne(mountPoint string, o mountOpt) error {
	if o.vfs {
		attr := vfsAttr(o.value)
		if err := unix.MountSetattr(unix.AT_FDCWD, mountPoint, unix.AT_SYMLINK_NOFOLLOW, &attr); err != nil {
			return fmt.Errorf("mount option %s on %s: %w (%v)", o.value, mountPoint, ErrRefused, err)
		}
		return nil
	}
	fd, err := fspick(mountPoint)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := fsSet(fd, o.value); err != nil {
		return fmt.Errorf("mount option %s on %s: %w: %s", o.value, mountPoint, ErrRefused, kernelSays(fd, err))
	}
	if err := unix.FsconfigReconfigure(fd); err != nil {
		return fmt.Errorf("mount option %s on %s: %w: %s", o.value, mountPoint, ErrRefused, kernelSays(fd, err))
	}
	return nil
}

func vfsAttr(v string) unix.MountAttr {
	switch v {
	case "noatime":
		return unix.MountAttr{Attr_clr: unix.MOUNT_ATTR__ATIME, Attr_set: unix.MOUNT_ATTR_NOATIME}
	case "strictatime":
		return unix.MountAttr{Attr_clr: unix.MOUNT_ATTR__ATIME, Attr_set: unix.MOUNT_ATTR_STRICTATIME}
	case "relatime":
		return unix.MountAttr{Attr_clr: unix.MOUNT_ATTR__ATIME, Attr_set: unix.MOUNT_ATTR_RELATIME}
	case "nodiratime":
		return unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NODIRATIME}
	}
	return unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_NODIRATIME} // diratime
}

func fspick(mountPoint string) (int, error) {
	fd, err := unix.Fspick(unix.AT_FDCWD, mountPoint, unix.FSPICK_CLOEXEC|unix.FSPICK_NO_AUTOMOUNT|unix.FSPICK_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.EPERM) {
		return -1, fmt.Errorf("%w: reconfiguring %s needs root (CAP_SYS_ADMIN)", ErrNotAllowed, mountPoint)
	}
	if err != nil {
		return -1, fmt.Errorf("open %s for reconfiguration: %w", mountPoint, err)
	}
	return fd, nil
}

func fsSet(fd int, o string) error {
	if k, v, ok := strings.Cut(o, "="); ok {
		return unix.FsconfigSetString(fd, k, v)
	}
	return unix.FsconfigSetFlag(fd, o)
}

// kernelSays reads the messages the filesystem left on the fs_context
// ("e ext4: Unknown parameter 'x'"), or the errno when there are none.
func kernelSays(fd int, err error) string {
	var msgs []string
	buf := make([]byte, 1024)
	for range 16 {
		n, rerr := unix.Read(fd, buf)
		if rerr != nil || n <= 0 {
			break
		}
		m := strings.TrimSpace(string(buf[:n]))
		m = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(m, "e "), "w "), "i ")
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return err.Error()
	}
	return strings.Join(msgs, "; ")
}

// remountRestorer puts a mount's options back. It acts only on a mount
// still at Target with the same device (Ident), and only with options of
// the known classes, so a forged journal cannot do more than a knob can.
type remountRestorer struct{ r diskstats.Resolver }

var _ Restorer = remountRestorer{}

func (rr remountRestorer) Restore(c Change) error {
	m, err := findMount(rr.r, c.Target, c.Ident)
	if err != nil {
		return err
	}
	opts, unknown, err := parseMountOptions(c.Before, m.FSType)
	if err != nil || len(unknown) > 0 {
		return fmt.Errorf("%w: options %q are not the mount knob's", ErrJournal, c.Before)
	}
	for _, o := range opts {
		if classNamed(o.class).current(m) == o.value {
			continue
		}
		if err := remountOne(m.MountPoint, o); err != nil {
			return err
		}
	}
	return nil
}

// findMount returns the mount at mountPoint if its device is ident
// ("major:minor").
func findMount(r diskstats.Resolver, mountPoint, ident string) (diskstats.Mount, error) {
	mounts, err := r.Mounts()
	if err != nil {
		return diskstats.Mount{}, err
	}
	var found *diskstats.Mount
	for i := range mounts { // the last mount at a point is the one visible there
		if mounts[i].MountPoint == mountPoint {
			found = &mounts[i]
		}
	}
	if found == nil {
		return diskstats.Mount{}, fmt.Errorf("no filesystem is mounted at %s any more", mountPoint)
	}
	if id := mountIdent(*found); id != ident {
		return diskstats.Mount{}, fmt.Errorf("%s is now device %s, not %s: left alone", mountPoint, id, ident)
	}
	return *found, nil
}

func mountIdent(m diskstats.Mount) string { return fmt.Sprintf("%d:%d", m.Major, m.Minor) }

func among(vals ...string) func(string) (string, bool) {
	return func(o string) (string, bool) { return o, slices.Contains(vals, o) }
}

func aliases(m map[string]string) func(string) (string, bool) {
	return func(o string) (string, bool) { v, ok := m[o]; return v, ok }
}

// firstOf returns the first of candidates in opts, else def.
func firstOf(opts []string, def string, candidates ...string) string {
	for _, c := range candidates {
		if slices.Contains(opts, c) {
			return c
		}
	}
	return def
}

// flagOf returns on if opts holds it, else off.
func flagOf(opts []string, on, off string) string {
	if slices.Contains(opts, on) {
		return on
	}
	return off
}

// prefixed returns the first option with prefix, else def.
func prefixed(opts []string, prefix, def string) string {
	for _, o := range opts {
		if strings.HasPrefix(o, prefix) {
			return o
		}
	}
	return def
}
