package diskprofile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hostknob"
)

// StateDir holds the loop filesystems' images inside the data directory.
const StateDir = ".writepath-disk"

// mounted is a loop filesystem a Manager made and keeps mounted until it
// closes (a managed server on it outlives a phase, as on a real disk).
type mounted struct {
	fs    LoopFS // with defaults
	image string
	dir   string // absolute mount point
	loop  string // kernel name, "loop3"
	dev   string // "7:3"
	set   uint64 // the journal set that unmounts it
}

// imagePath is where the image of a filesystem mounted at dir lives.
func (m *Manager) imagePath(dir string) string {
	return filepath.Join(m.cfg.DataDir, StateDir, strings.ReplaceAll(dir, "/", "_")+".img")
}

// mountFS makes (first time) and mounts a loop filesystem. On any failure
// nothing stays attached or mounted.
func (m *Manager) mountFS(fs LoopFS) (*mounted, error) {
	mt := &mounted{fs: fs, image: m.imagePath(fs.Dir), dir: filepath.Join(m.cfg.DataDir, fs.Dir)}
	if err := m.checkMountPoint(mt); err != nil {
		return nil, err
	}
	fresh, err := m.ensureImage(mt)
	if err != nil {
		return nil, err
	}
	lo, err := attachLoop(mt.image)
	if err != nil {
		return nil, err
	}
	defer lo.Close() // the mount holds the device; autoclear detaches it at unmount
	mt.loop = strings.TrimPrefix(lo.Name(), "/dev/")
	if mt.dev, err = devNumber(lo.Name()); err != nil {
		return nil, err
	}
	if fresh {
		if err := mkfs(fs.Type, lo.Name()); err != nil {
			return nil, err
		}
		if err := os.WriteFile(mt.image+".fs", []byte(fsIdent(fs)), 0o600); err != nil {
			return nil, fmt.Errorf("disk image %s: %w", mt.image, err)
		}
	}
	if mt.set, err = m.journal.Begin([]hostknob.Change{{Kind: KindMount, Target: mt.dir, Ident: mt.dev}}); err != nil {
		return nil, err
	}
	args := []string{"-t", fs.Type, lo.Name(), mt.dir}
	if len(fs.MountOptions) > 0 {
		args = append([]string{"-o", strings.Join(fs.MountOptions, ",")}, args...)
	}
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		m.journal.Restore(mt.set)
		return nil, fmt.Errorf("mount %s on %s: %v: %s", lo.Name(), mt.dir, err, strings.TrimSpace(string(out)))
	}
	return mt, nil
}

// fsIdent is what an image was made with; another size or type makes a
// new image (the old data is dropped).
func fsIdent(fs LoopFS) string { return fmt.Sprintf("%s %d\n", fs.Type, fs.Size) }

// checkMountPoint refuses a mount point that is already one, or an image
// still attached (a filesystem unmounted lazily while a process held it).
func (m *Manager) checkMountPoint(mt *mounted) error {
	if err := os.MkdirAll(mt.dir, 0o755); err != nil {
		return fmt.Errorf("disk mount point %s: %w", mt.dir, err)
	}
	if mi, _ := findMount(m.cfg.MountInfo, mt.dir); mi != "" {
		return fmt.Errorf("disk mount point %s: %w: already a mount point (of %s)", mt.dir, ErrBusy, mi)
	}
	if lo := attachedAs(m.cfg.SysDir, mt.image); lo != "" {
		return fmt.Errorf("disk image %s: %w: still attached as %s (a process still holds files on a filesystem someone unmounted lazily; stop it)", mt.image, ErrBusy, lo)
	}
	return nil
}

// ensureImage creates (preallocated) or reuses the image; fresh means it
// needs a filesystem.
func (m *Manager) ensureImage(mt *mounted) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(mt.image), 0o700); err != nil {
		return false, fmt.Errorf("disk image %s: %w", mt.image, err)
	}
	if b, err := os.ReadFile(mt.image + ".fs"); err == nil && string(b) == fsIdent(mt.fs) {
		if st, err := os.Stat(mt.image); err == nil && st.Size() == mt.fs.Size {
			return false, nil
		}
	}
	os.Remove(mt.image + ".fs")
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(mt.image), &st); err == nil {
		if free := int64(st.Bavail) * st.Bsize; free < mt.fs.Size+(1<<30) {
			return false, fmt.Errorf("disk image %s: %d MiB free, the image needs %d MiB and 1 GiB spare", mt.image, free>>20, mt.fs.Size>>20)
		}
	}
	f, err := os.OpenFile(mt.image, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, fmt.Errorf("disk image %s: %w", mt.image, err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, mt.fs.Size); err != nil {
		if err := f.Truncate(mt.fs.Size); err != nil {
			return false, fmt.Errorf("disk image %s: %w", mt.image, err)
		}
	}
	return true, f.Sync()
}

// attachLoop attaches the image to a free loop device with direct I/O
// (no second page cache under the filesystem's) and autoclear (the device
// goes when its last user closes it: the returned file, then the mount).
func attachLoop(image string) (*os.File, error) {
	img, err := os.OpenFile(image, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("disk image: %w", err)
	}
	defer img.Close()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: loop devices: %w", ErrUnavailable, err)
	}
	defer ctl.Close()
	for range 8 { // another process may take the free device first
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("%w: no free loop device: %w", ErrUnavailable, err)
		}
		lo, err := os.OpenFile("/dev/loop"+strconv.Itoa(n), os.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("loop device: %w", err)
		}
		cfg := unix.LoopConfig{Fd: uint32(img.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR | unix.LO_FLAGS_DIRECT_IO
		copy(cfg.Info.File_name[:len(cfg.Info.File_name)-1], image)
		err = unix.IoctlLoopConfigure(int(lo.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) {
			lo.Close()
			continue
		}
		if err != nil {
			lo.Close()
			return nil, fmt.Errorf("attach %s to %s: %w", image, lo.Name(), err)
		}
		if b, _ := os.ReadFile("/sys/block/loop" + strconv.Itoa(n) + "/loop/dio"); strings.TrimSpace(string(b)) != "1" {
			lo.Close()
			return nil, fmt.Errorf("%w: %s over %s has no direct I/O (the data directory's filesystem refuses O_DIRECT); a second page cache would hide the caps", ErrUnavailable, lo.Name(), image)
		}
		return lo, nil
	}
	return nil, fmt.Errorf("%w: loop devices kept being taken", ErrBusy)
}

// mkfs makes a filesystem without lazy initialisation, so no background
// thread writes inode tables while a test is measured.
func mkfs(fsType, dev string) error {
	var cmd *exec.Cmd
	switch fsType {
	case "ext4":
		cmd = exec.Command("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0,nodiscard", dev)
	case "xfs":
		cmd = exec.Command("mkfs.xfs", "-q", "-f", "-K", dev)
	default:
		return fmt.Errorf("mkfs: %q is not a filesystem a disk profile makes", fsType)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", cmd.Path, dev, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// devNumber is a block device node's "MAJ:MIN".
func devNumber(node string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(node, &st); err != nil {
		return "", fmt.Errorf("%s: %w", node, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", fmt.Errorf("%s is not a block device", node)
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)), nil
}

// attachedAs names the loop device backed by image, if any.
func attachedAs(sysDir, image string) string {
	files, _ := filepath.Glob(filepath.Join(sysDir, "block", "loop*", "loop", "backing_file"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == image {
			return filepath.Base(filepath.Dir(filepath.Dir(f)))
		}
	}
	return ""
}

// findMount returns the "MAJ:MIN" of the filesystem mounted exactly at
// dir (the last such mount), or "".
func findMount(mountInfo, dir string) (string, error) {
	f, err := os.Open(mountInfo)
	if err != nil {
		return "", err
	}
	defer f.Close()
	dev := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescape(fields[4]) == dir {
			dev = fields[2]
		}
	}
	return dev, sc.Err()
}

// mountRestorer unmounts a loop filesystem a Manager mounted. A journal
// is input, so it acts only on a mount at the journaled point whose
// device is the journaled loop device backed by an image in the state
// directory. A busy filesystem (a managed server still running on it) is
// left mounted and its journal set open: detached lazily, the server's
// directory would vanish from view while it still writes there.
type mountRestorer struct {
	stateDir, sysDir, mountInfo string
}

func (r mountRestorer) Restore(c hostknob.Change) error {
	if !devRe.MatchString(c.Ident) || !filepath.IsAbs(c.Target) || filepath.Clean(c.Target) != c.Target {
		return fmt.Errorf("%w: %s %s is not a disk mount", hostknob.ErrJournal, c.Target, c.Ident)
	}
	dev, err := findMount(r.mountInfo, c.Target)
	if err != nil {
		return err
	}
	if dev != c.Ident {
		return nil // not mounted (any more): nothing to undo
	}
	b, _ := os.ReadFile(filepath.Join(r.sysDir, "dev", "block", c.Ident, "loop", "backing_file"))
	if backing := strings.TrimSpace(string(b)); filepath.Dir(backing) != r.stateDir {
		return fmt.Errorf("%w: %s is on %s (%q), not a disk profile's image in %s", hostknob.ErrJournal, c.Target, c.Ident, backing, r.stateDir)
	}
	err = unix.Unmount(c.Target, 0)
	if errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("unmount %s: %w: a process still has files on it (a managed server? writepath mysqld stop --dir %s/...); the worker's next start unmounts it", c.Target, ErrBusy, c.Target)
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", c.Target, err)
	}
	return nil
}
