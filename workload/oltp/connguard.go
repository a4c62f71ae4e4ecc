package oltp

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/writepath/writepath/workload"
)

// maxPasswordFile bounds a --mysql-password-file.
const maxPasswordFile = 4096

// endpoint is the database server a spec connects to itself (not the
// managed server, which Run connects to): "host:port" over TCP or the
// socket's path (relative ones under the data dir), "" when the spec's
// managed server is the one.
func (w *Workload) endpoint(env workload.Env) string {
	c := w.Spec.GetConnection()
	if w.Spec.GetServer().GetDir() != "" && c.GetHost() == "" && c.GetSocket() == "" {
		return ""
	}
	if s := c.GetSocket(); s != "" {
		if !filepath.IsAbs(s) && env.DataDir != "" {
			s = filepath.Join(env.DataDir, s)
		}
		return s
	}
	return net.JoinHostPort(w.Options.Conn.Host, strconv.Itoa(w.Options.Conn.Port))
}

// checkConnection passes the database server the spec names through the
// worker's guard (loopback, sockets inside the allowed paths and
// --allow-mysql by default) and connects to exactly the socket it
// checked.
func (w *Workload) checkConnection(env workload.Env) error {
	e := w.endpoint(env)
	if e == "" || env.Guard == nil {
		return nil
	}
	if err := env.Allow(workload.Endpoint, e); err != nil {
		return fmt.Errorf("oltp --mysql-host/--mysql-port/--mysql-socket: %w", err)
	}
	if strings.HasPrefix(e, "/") {
		w.Options.Conn.Socket = e
	}
	return nil
}

// readPasswordFile reads --mysql-password-file on the worker, through the
// guard, into the connection options (memory only). The file must be
// private (no group or other permission), as a credential file should.
func (w *Workload) readPasswordFile(env workload.Env) error {
	f := w.Spec.GetConnection().GetPasswordFile()
	if f == "" {
		return nil
	}
	p, err := env.Path(f)
	if err != nil {
		return fmt.Errorf("oltp --mysql-password-file: %w", err)
	}
	st, err := p.Stat()
	if err != nil {
		return fmt.Errorf("oltp --mysql-password-file: %w", err)
	}
	if st.Mode&0o077 != 0 {
		return fmt.Errorf("oltp --mysql-password-file %s: mode %04o lets other users read it; chmod 600 it", p, st.Mode&0o7777)
	}
	b, err := p.ReadFile(maxPasswordFile)
	if err != nil {
		return fmt.Errorf("oltp --mysql-password-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	w.Options.Conn.Password = strings.TrimRight(line, "\r")
	return nil
}
