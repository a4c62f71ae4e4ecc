package fio

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/beneath"
)

// device is the block device under a path: its disk name (the whole disk
// for a partition, as fio's disk_util shows it) and logical block size.
type device struct {
	name string // "" when the filesystem has no block device (tmpfs, overlay)
	lbs  uint64 // logical block size in bytes
}

// defaultLBS is assumed when the device cannot be found; if it is wrong for
// direct I/O the kernel refuses the I/O and the job fails with EINVAL.
const defaultLBS = 512

// deviceOf finds the block device holding path (a file or directory).
func deviceOf(path beneath.Path) device {
	st, err := path.Stat()
	if err != nil {
		return device{lbs: defaultLBS}
	}
	maj, min := unix.Major(st.Dev), unix.Minor(st.Dev)
	if maj == 0 {
		return device{lbs: defaultLBS}
	}
	sys, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", maj, min))
	if err != nil {
		return device{lbs: defaultLBS}
	}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		sys = filepath.Dir(sys)
	}
	d := device{name: filepath.Base(sys), lbs: defaultLBS}
	if b, err := os.ReadFile(filepath.Join(sys, "queue", "logical_block_size")); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			d.lbs = n
		}
	}
	return d
}

// isTmpfs reports whether path lies on tmpfs, which refuses O_DIRECT.
func isTmpfs(path beneath.Path) bool {
	fs, err := path.Statfs()
	return err == nil && fs.Type == unix.TMPFS_MAGIC
}
