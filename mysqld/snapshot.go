package mysqld

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Snapshot copies the datadir to dst (replacing it). The server must be
// stopped, so that the copy is consistent; take it after prepare and
// Restore it before each round so every round starts from the same data.
func (in *Instance) Snapshot(ctx context.Context, dst string) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.runningLocked() {
		return fmt.Errorf("snapshot mysqld %s: %w (stop it first)", in.dir, ErrRunning)
	}
	if !in.Initialized() {
		return fmt.Errorf("snapshot mysqld %s: %w", in.dir, ErrNotInitialized)
	}
	if err := replaceTree(ctx, in.DataDir(), dst); err != nil {
		return fmt.Errorf("snapshot mysqld %s to %s: %w", in.dir, dst, err)
	}
	return nil
}

// Restore replaces the datadir with the snapshot in src. The server must
// be stopped.
func (in *Instance) Restore(ctx context.Context, src string) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.runningLocked() {
		return fmt.Errorf("restore mysqld %s: %w (stop it first)", in.dir, ErrRunning)
	}
	if _, err := os.Stat(filepath.Join(src, "mysql")); err != nil {
		return fmt.Errorf("restore mysqld %s from %s: not a datadir snapshot: %w", in.dir, src, err)
	}
	if err := replaceTree(ctx, src, in.DataDir()); err != nil {
		return fmt.Errorf("restore mysqld %s from %s: %w", in.dir, src, err)
	}
	// Whatever accounts the copy has, the next start sets root's password.
	in.pwApplied = false
	return in.saveState(0)
}

// replaceTree copies src to a temporary sibling of dst and renames it
// into place, so an interrupted copy never leaves a half datadir at dst.
func replaceTree(ctx context.Context, src, dst string) error {
	dst = filepath.Clean(dst)
	tmp := dst + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := copyTree(ctx, src, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// copyTree copies regular files, directories and symlinks, keeping modes.
func copyTree(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			err = os.MkdirAll(target, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			var link string
			if link, err = os.Readlink(p); err == nil {
				err = os.Symlink(link, target)
			}
		case info.Mode().IsRegular():
			err = copyFile(p, target, info.Mode().Perm())
		default:
			return nil // sockets, fifos: not data
		}
		if err != nil {
			return err
		}
		return keepOwner(target, info)
	})
}

// keepOwner gives a copy the owner of its original (the server's account
// owns a datadir; a copy made by root would lock it out), when we may.
func keepOwner(target string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	return os.Lchown(target, int(st.Uid), int(st.Gid))
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
