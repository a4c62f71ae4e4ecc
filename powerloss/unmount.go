package powerloss

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// busyRetry is how long a clean unmount is retried: files of a process
// just killed are released by the kernel a moment after it dies.
const busyRetry = time.Second

// unmountFUSE unmounts the served file system, lazily if it stays busy
// (then the connection is aborted so that the serve loop ends).
func unmountFUSE(srv *fuse.Server, mountpoint string) (lazy bool, err error) {
	conn, _, _ := mountInfo(mountpoint) // before: mountinfo loses it with the mount
	deadline := time.Now().Add(busyRetry)
	for {
		if err = srv.Unmount(); err == nil {
			return false, nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if lerr := lazyUnmount(mountpoint); lerr != nil {
		return true, fmt.Errorf("unmount %s: %w; lazy: %w", mountpoint, err, lerr)
	}
	abortConn(conn)
	return true, nil
}

// lazyUnmount detaches mountpoint now; the kernel finishes when the last
// user lets go.
func lazyUnmount(mountpoint string) error {
	out, err := exec.Command(fusermount(), "-u", "-z", mountpoint).CombinedOutput()
	if err != nil {
		if uerr := unix.Unmount(mountpoint, unix.MNT_DETACH); uerr != nil {
			return fmt.Errorf("%s -u -z: %w: %s; umount2: %w", fusermount(), err, strings.TrimSpace(string(out)), uerr)
		}
	}
	return nil
}

func fusermount() string {
	if p, err := exec.LookPath("fusermount3"); err == nil {
		return p
	}
	return "fusermount"
}

// fusectl is where the kernel lists FUSE connections.
const fusectl = "/sys/fs/fuse/connections"

// abortConn aborts a FUSE connection through fusectl, best effort: users
// left on a lazily unmounted file system then get ENOTCONN and the serve
// loop ends. fusectl is mounted if it is not (systemd normally does).
func abortConn(conn string) {
	if conn == "" {
		return
	}
	p := filepath.Join(fusectl, conn, "abort")
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		unix.Mount("fusectl", fusectl, "fusectl", 0, "")
	}
	if err := os.WriteFile(p, []byte("1"), 0); err != nil {
		fmt.Fprintln(os.Stderr, "powerloss: abort connection:", err)
	}
}

// mountInfo finds the FUSE mount at mountpoint in /proc/self/mountinfo
// and returns its fusectl connection name (the device minor), without
// touching the mount itself.
func mountInfo(mountpoint string) (conn string, ok bool, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false, fmt.Errorf("mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) > 4 && unescapeMount(fields[4]) == mountpoint && strings.Contains(line, " - fuse") {
			_, minor, _ := strings.Cut(fields[2], ":")
			conn, ok = minor, true // keep going: the last mount on top wins
		}
	}
	return conn, ok, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline
// and backslash.
func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
