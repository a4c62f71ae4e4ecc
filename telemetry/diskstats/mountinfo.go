package diskstats

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mount is one line of /proc/<pid>/mountinfo (see proc(5)).
type Mount struct {
	ID, ParentID int
	// Major, Minor is st_dev of files on this filesystem; 0:N for
	// filesystems without a block device of their own (tmpfs, overlay,
	// btrfs subvolumes, NFS).
	Major, Minor uint32
	Root         string // path inside the filesystem that is mounted
	MountPoint   string
	Options      string // per-mount options ("rw,noatime")
	FSType       string
	Source       string // "/dev/nvme0n1p2", "tmpfs", ...
	SuperOptions string // per-superblock options ("rw,discard,errors=remount-ro")
}

// AllOptions returns the per-mount and per-superblock options, in that
// order, without repeats.
func (m Mount) AllOptions() []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range strings.Split(m.Options+","+m.SuperOptions, ",") {
		if o != "" && !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// ParseMountInfo parses a mountinfo file.
func ParseMountInfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		m, err := parseMountLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	return out, nil
}

// parseMountLine parses "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3
// /dev/root rw,errors=continue": fixed fields, optional fields up to "-",
// then type, source and superblock options.
func parseMountLine(line string) (Mount, error) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 6 || sep < 0 || len(f) < sep+3 {
		return Mount{}, fmt.Errorf("%q: %w", line, ErrFormat)
	}
	var m Mount
	var err error
	if m.ID, err = strconv.Atoi(f[0]); err != nil {
		return Mount{}, fmt.Errorf("mount id %q: %w", f[0], ErrFormat)
	}
	if m.ParentID, err = strconv.Atoi(f[1]); err != nil {
		return Mount{}, fmt.Errorf("parent id %q: %w", f[1], ErrFormat)
	}
	if m.Major, m.Minor, err = parseMajorMinor(f[2]); err != nil {
		return Mount{}, err
	}
	m.Root, m.MountPoint, m.Options = unescape(f[3]), unescape(f[4]), f[5]
	m.FSType, m.Source = f[sep+1], unescape(f[sep+2])
	if len(f) > sep+3 {
		m.SuperOptions = f[sep+3]
	}
	return m, nil
}

// parseMajorMinor parses "254:0".
func parseMajorMinor(s string) (uint32, uint32, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	maj, err1 := strconv.ParseUint(a, 10, 32)
	min, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("major:minor %q: %w", s, ErrFormat)
	}
	return uint32(maj), uint32(min), nil
}

// unescape decodes the octal escapes (\040 for space, \011, \012, \134)
// the kernel uses in mountinfo paths.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountFor returns the mount that holds path (an absolute path with
// symlinks resolved): the longest mount point that is a prefix of it, the
// last such one if several are stacked.
func mountFor(mounts []Mount, path string) (Mount, bool) {
	best, found := Mount{}, false
	for _, m := range mounts {
		if !under(path, m.MountPoint) {
			continue
		}
		if !found || len(m.MountPoint) >= len(best.MountPoint) {
			best, found = m, true
		}
	}
	return best, found
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	if dir == "/" || path == dir {
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}
