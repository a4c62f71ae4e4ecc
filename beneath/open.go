package beneath

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// resolveFlags confine a lookup: never above the directory it starts
// from, never through a symbolic link (a checked name has none left),
// never through a /proc magic link.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// haveOpenat2 reports, once per process, whether the kernel answers
// openat2 (Linux 5.6+, not blocked by a seccomp filter).
var haveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// open opens rel beneath root with flags: root itself is opened without
// following any symlink (it is absolute and has none), then rel beneath
// it. withOpenat2 false walks both one component at a time instead.
func open(root, rel string, flags int, perm uint32, withOpenat2 bool) (int, error) {
	if !withOpenat2 {
		return walk(strings.TrimPrefix(root, "/")+"/"+rel, flags, perm)
	}
	rfd, err := openat2(unix.AT_FDCWD, root, unix.O_PATH|unix.O_DIRECTORY, 0, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return -1, err
	}
	defer unix.Close(rfd)
	return openat2(rfd, rel, flags, perm, resolveFlags)
}

func openat2(dir int, name string, flags int, perm uint32, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm) // openat2 refuses a mode without O_CREAT
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dir, name, &how)
		// EAGAIN: a rename raced the ".."-free lookup's safety check;
		// the kernel asks to retry.
		if err == unix.EAGAIN && tries < 16 {
			continue
		}
		return fd, err
	}
}

// walk opens name (relative to "/") one component at a time, each with
// O_NOFOLLOW in the directory opened before it: the same confinement as
// resolveFlags without openat2. A symlink anywhere is ELOOP, ".." EXDEV.
func walk(name string, flags int, perm uint32) (int, error) {
	var comps []string
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "", ".":
		case "..":
			return -1, unix.EXDEV
		default:
			comps = append(comps, c)
		}
	}
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for i, c := range comps {
		if i == len(comps)-1 {
			break
		}
		next, err := unix.Openat(dir, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
	}
	defer unix.Close(dir)
	if len(comps) == 0 {
		return unix.Openat(dir, ".", flags|unix.O_CLOEXEC, perm)
	}
	fd, err := unix.Openat(dir, comps[len(comps)-1], flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return -1, err
	}
	if flags&unix.O_PATH != 0 {
		// O_PATH|O_NOFOLLOW opens a symlink itself instead of failing.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, unix.ELOOP
		}
	}
	return fd, nil
}
