package transport

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/writepath/writepath/auth"
)

// maxSocketPath is the longest unix socket path Linux accepts
// (sizeof(sun_path) - 1).
const maxSocketPath = 107

// Private is the embedded fabric's transport (run --local-workers, a local
// campaign, quickstart): nobody but the process that started it can
// submit a job. Three locks, each enough against another local user:
//   - a unix socket in a fresh directory of mode 0700 (no TCP port at all);
//   - each connection's SO_PEERCRED must be this process (pid and uid):
//     another process of the same user is closed at accept;
//   - every call must carry a random token that lives only in this
//     process's memory.
type Private struct {
	dir, path string
	lis       *privateListener
	token     string
}

// ListenPrivate creates the socket and its directory. Close removes both.
func ListenPrivate(log *slog.Logger) (*Private, error) {
	dir, err := privateDir()
	if err != nil {
		return nil, fmt.Errorf("private fabric socket: %w", err)
	}
	path := filepath.Join(dir, "coordinator.sock")
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("private fabric socket: %w", err)
	}
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		ul.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("private fabric token: %w", err)
	}
	return &Private{dir: dir, path: path, token: hex.EncodeToString(tok),
		lis: &privateListener{UnixListener: ul, refused: newRateLog(log, "refused a connection to the private fabric socket from another process")}}, nil
}

// privateDir makes a 0700 directory under the temporary directory, or
// under /tmp when $TMPDIR is too long for a socket path.
func privateDir() (string, error) {
	parent := os.TempDir()
	if len(filepath.Join(parent, "writepath-fabric-0123456789", "coordinator.sock")) > maxSocketPath {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "writepath-fabric-")
	if err != nil {
		return "", err
	}
	// MkdirTemp creates 0700 (less with a umask); make sure of it.
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Listener is what the coordinator serves.
func (p *Private) Listener() net.Listener { return p.lis }

// Path is the socket's path.
func (p *Private) Path() string { return p.path }

// Target is the gRPC target that reaches the socket.
func (p *Private) Target() string { return "unix://" + p.path }

// ServerOptions are the fabric's limits with the token required.
func (p *Private) ServerOptions() []grpc.ServerOption {
	return Server{Policy: auth.Policy{Token: p.token}}.Options()
}

// DialOptions reach the socket with the token; only this process has it.
func (p *Private) DialOptions() []grpc.DialOption {
	return Client{Token: p.token}.DialOptions()
}

// Close closes the listener and removes the socket and its directory.
func (p *Private) Close() error {
	err := p.lis.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return errors.Join(err, os.RemoveAll(p.dir))
}

// privateListener admits connections from this process only.
type privateListener struct {
	*net.UnixListener
	refused *rateLog
}

func (l *privateListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		if err := ownPeer(c); err != nil {
			l.refused.warn(time.Now(), "err", err)
			c.Close()
			continue
		}
		return c, nil
	}
}

// ownPeer checks that the process at the other end of c is this one.
func ownPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	if int(cred.Pid) != os.Getpid() || int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("peer pid %d uid %d is not this process (pid %d uid %d)", cred.Pid, cred.Uid, os.Getpid(), os.Getuid())
	}
	return nil
}
