package mysqld

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// DefaultServerUser is the unprivileged account a server started by root
// runs as, when it exists (Debian's and the upstream packages create it).
const DefaultServerUser = "mysql"

// osUser is the account the server process runs as.
type osUser struct {
	name     string
	uid, gid int
}

// serverUserLocked says whom the server runs as: nobody else than us when
// we are not root; as root, the account a user= setting names, else
// DefaultServerUser when it exists, else root (mysqld must be told so).
func (in *Instance) serverUserLocked() (osUser, error) {
	if os.Geteuid() != 0 {
		return osUser{uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	name := ""
	for _, s := range in.settings {
		if normKey(s.Key) == "user" && s.Value != "" {
			name = s.Value
		}
	}
	explicit := name != ""
	if !explicit {
		name = DefaultServerUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		if explicit {
			return osUser{}, fmt.Errorf("user=%s: %w", name, err)
		}
		return osUser{name: "root"}, nil
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return osUser{name: u.Username, uid: uid, gid: gid}, nil
}

// ServerUser is the account the server process runs as ("" when it runs
// as the calling user, who is not root).
func (in *Instance) ServerUser() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	u, _ := in.serverUserLocked()
	return u.name
}

// prepareLayoutLocked makes the directories the server writes and gives
// them to the server's account: the datadir, the tmpdir and the 0700
// directory of the socket and pid file; the error log too. It checks first
// that the account can reach the instance directory at all.
func (in *Instance) prepareLayoutLocked() error {
	u, err := in.serverUserLocked()
	if err != nil {
		return err
	}
	other := u.uid != os.Geteuid()
	if other {
		if err := reachable(in.dir, u); err != nil {
			return err
		}
	}
	dirs := []struct {
		path string
		mode os.FileMode
	}{{in.DataDir(), 0o750}, {in.TmpDir(), 0o750}, {in.RunDir(), 0o700}}
	if in.tmpSock != "" {
		dirs = append(dirs, struct {
			path string
			mode os.FileMode
		}{in.tmpSock, 0o700})
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return err
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return err
		}
		if other {
			if err := os.Chown(d.path, u.uid, u.gid); err != nil {
				return err
			}
		}
	}
	f, err := os.OpenFile(in.ErrorLogPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	f.Close()
	if other {
		return os.Chown(in.ErrorLogPath(), u.uid, u.gid)
	}
	return nil
}

// ErrUnreachable reports an instance directory the server's account cannot
// reach.
var ErrUnreachable = errors.New("the server's account cannot reach the instance directory")

// reachable checks that u may search every directory from / to dir (the
// server opens its datadir, socket and logs by path).
func reachable(dir string, u osUser) error {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err == nil && !canSearch(st, u) {
			return fmt.Errorf("%w: mysqld runs as %s (uid %d), which cannot enter %s (mode %o, owner uid %d): choose a directory it can reach, make it searchable (chmod o+x %s), or run the server as root with --set user=root",
				ErrUnreachable, u.name, u.uid, d, st.Mode&0o7777, st.Uid, d)
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

func canSearch(st syscall.Stat_t, u osUser) bool {
	switch {
	case int(st.Uid) == u.uid:
		return st.Mode&0o100 != 0
	case int(st.Gid) == u.gid:
		return st.Mode&0o010 != 0
	}
	return st.Mode&0o001 != 0
}
