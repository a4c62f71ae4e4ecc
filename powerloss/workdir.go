package powerloss

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// workMarker marks a work directory as ours, so that a leftover of a
// crashed server may be removed and nothing else ever is.
const workMarker = "POWERLOSS-WORKDIR"

// workDir is the layer's scratch space next to the backing directory, on
// the same file system (view and staging files are hard links to backing
// inodes, and a committed create is a rename out of staging).
type workDir struct {
	root    string
	backing string
	view    string // the mount's namespace
	staging string // files not yet durably named
}

// DefaultWorkDir is where the work directory goes unless one is given: a
// hidden sibling of the backing directory.
func DefaultWorkDir(backing string) string {
	b := filepath.Clean(backing)
	return filepath.Join(filepath.Dir(b), "."+filepath.Base(b)+".powerloss")
}

// checkPaths refuses layouts that would loop through the mount.
func checkPaths(backing, work, mountpoint string) error {
	for _, p := range [][2]string{{mountpoint, backing}, {mountpoint, work}, {work, backing}, {backing, work}} {
		if within(p[0], p[1]) {
			return fmt.Errorf("%s is inside %s: use separate directories for backing, work and mount: %w", p[0], p[1], ErrBadLayout)
		}
	}
	return nil
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."))
}

// prepareWorkDir (re)creates the work directory and fills the view with
// the backing directory's namespace: directories, hard links to every
// regular file, copies of symlinks and special files.
func prepareWorkDir(backing, root string) (workDir, error) {
	w := workDir{root: root, backing: backing, view: filepath.Join(root, "view"), staging: filepath.Join(root, "staging")}
	if err := removeWorkDir(root); err != nil {
		return w, err
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		return w, fmt.Errorf("work dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, workMarker), nil, 0o600); err != nil {
		return w, fmt.Errorf("work dir: %w", err)
	}
	if err := os.Mkdir(w.staging, 0o700); err != nil {
		return w, fmt.Errorf("work dir: %w", err)
	}
	if err := sameDevice(backing, root); err != nil {
		return w, err
	}
	if err := filepath.WalkDir(backing, w.mirror); err != nil {
		return w, fmt.Errorf("mirror %s: %w", backing, err)
	}
	return w, syncFS(backing)
}

// removeWorkDir removes a work directory that carries our marker. Its
// view holds only hard links, so the backing files are untouched.
func removeWorkDir(root string) error {
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, workMarker)); err != nil {
		return fmt.Errorf("work dir %s exists but is not a powerloss work dir; remove it or choose another: %w", root, ErrBadLayout)
	}
	if err := os.RemoveAll(root); err != nil {
		return fmt.Errorf("remove work dir: %w", err)
	}
	return nil
}

func sameDevice(a, b string) error {
	var sa, sb unix.Stat_t
	if err := unix.Stat(a, &sa); err != nil {
		return fmt.Errorf("stat %s: %w", a, err)
	}
	if err := unix.Stat(b, &sb); err != nil {
		return fmt.Errorf("stat %s: %w", b, err)
	}
	if sa.Dev != sb.Dev {
		return fmt.Errorf("work dir %s is not on the file system of %s: %w", b, a, ErrBadLayout)
	}
	return nil
}

func (w workDir) mirror(path string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(w.backing, path)
	if err != nil {
		return err
	}
	dst := filepath.Join(w.view, rel)
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		err = unix.Mkdir(dst, st.Mode&07777)
	case unix.S_IFREG:
		return unix.Link(path, dst) // same inode: owner and mode come along
	case unix.S_IFLNK:
		var target string
		if target, err = os.Readlink(path); err == nil {
			err = unix.Symlink(target, dst)
		}
	default:
		err = unix.Mknod(dst, st.Mode, int(st.Rdev))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return unix.Lchown(dst, int(st.Uid), int(st.Gid))
}

// syncFS makes the backing file system durable, so that what the layer
// starts from is durable indeed.
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}
