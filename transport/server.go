package transport

import (
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/writepath/writepath/auth"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// FabricRoles says which certificate role may call which service: workers
// connect, clients (the CLI) control. A coordinator certificate may do
// neither, so a stolen coordinator key cannot submit jobs.
var FabricRoles = map[string][]auth.Role{
	writepathv1.WorkerService_ServiceDesc.ServiceName:  {auth.RoleWorker},
	writepathv1.ControlService_ServiceDesc.ServiceName: {auth.RoleClient},
}

// Server is how a coordinator serves.
type Server struct {
	// Policy is who may call what: TLS (mutual, roles from certificates),
	// a bearer token, the roles (FabricRoles when nil).
	Policy auth.Policy
	// Insecure serves plaintext to any address; without it and without
	// TLS only loopback peers are served.
	Insecure bool
	// MaxConnections bounds the connections served at once; 0 means
	// DefaultMaxConnections.
	MaxConnections int
	// Log receives refused connections (rate-limited); nil discards.
	Log *slog.Logger
}

// Options are the gRPC server options: the fabric's limits and keepalive,
// the credentials and the admission of every call.
func (s Server) Options() []grpc.ServerOption {
	p := s.Policy
	if p.Roles == nil {
		p.Roles = FabricRoles
	}
	return append(baseServerOptions(), p.ServerOptions()...)
}

// Mode is a one-line description of the security mode, for the log.
func (s Server) Mode() string {
	m := "plaintext, loopback peers only (start with --tls-* for other hosts)"
	switch {
	case s.Policy.TLS != nil:
		m = "mutual TLS (worker and client certificate roles, worker names bound to certificates)"
	case s.Insecure:
		m = "INSECURE: plaintext from any address (--insecure)"
	}
	if s.Policy.Token != "" {
		m += ", bearer token required"
	}
	return m
}

// Listen opens the TCP address addr and wraps it (see Wrap).
func (s Server) Listen(addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return s.Wrap(lis), nil
}

// Wrap bounds l to MaxConnections open connections (one more is closed at
// once and logged) and, in plaintext without Insecure, to loopback peers
// (others are closed at once and logged). Both logs are rate-limited.
func (s Server) Wrap(l net.Listener) net.Listener {
	max := s.MaxConnections
	if max <= 0 {
		max = DefaultMaxConnections
	}
	g := &guarded{Listener: l, max: int64(max),
		overLog: newRateLog(s.Log, fmt.Sprintf("refused a connection: %d connections open, the limit (--max-connections)", max))}
	if s.Policy.TLS == nil && !s.Insecure {
		g.loopbackLog = newRateLog(s.Log, "refused plaintext connection from a non-loopback address; serve with --tls-* (or --insecure)")
	}
	return g
}

// guarded is a listener that refuses what Wrap says, and counts the
// connections it handed out until they close.
type guarded struct {
	net.Listener
	max         int64
	open        atomic.Int64
	overLog     *rateLog
	loopbackLog *rateLog // nil: every address is served
}

func (g *guarded) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if g.loopbackLog != nil && !auth.IsLoopback(c.RemoteAddr()) {
			g.loopbackLog.warn(time.Now(), "peer", c.RemoteAddr().String())
			c.Close()
			continue
		}
		if g.open.Add(1) > g.max {
			g.open.Add(-1)
			g.overLog.warn(time.Now(), "peer", c.RemoteAddr().String())
			c.Close()
			continue
		}
		userTimeout(c)
		return &countedConn{Conn: c, g: g}, nil
	}
}

// userTimeout sets TCP_USER_TIMEOUT to the keepalive timeout, as gRPC does
// on the connections it sees unwrapped: unacknowledged data for that long
// ends the connection, so a worker behind a cut link is noticed.
func userTimeout(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(serverKeepalive.Timeout/time.Millisecond))
	})
}

// countedConn gives its slot back once, when closed.
type countedConn struct {
	net.Conn
	g      *guarded
	closed atomic.Bool
}

func (c *countedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.g.open.Add(-1)
	}
	return c.Conn.Close()
}
