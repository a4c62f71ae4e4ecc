package transport

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

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
func (s Server) Listen(addr string) (*Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return s.Wrap(lis), nil
}

// Wrap bounds l to MaxConnections open connections (one more is closed at
// once and logged) and, in plaintext without Insecure, to loopback peers
// (others are closed at once and logged). Both logs are rate-limited. Serve
// it with its own Options, which close a connection after MaxRefusedCalls.
func (s Server) Wrap(l net.Listener) *Listener {
	max := s.MaxConnections
	if max <= 0 {
		max = DefaultMaxConnections
	}
	g := &Listener{Listener: l, srv: s, max: int64(max), peers: map[string]*countedConn{},
		overLog:    newRateLog(s.Log, fmt.Sprintf("refused a connection: %d connections open, the limit (--max-connections)", max)),
		refusedLog: newRateLog(s.Log, fmt.Sprintf("closed a connection after %d refused calls (MaxRefusedCalls)", MaxRefusedCalls))}
	if s.Policy.TLS == nil && !s.Insecure {
		g.loopbackLog = newRateLog(s.Log, "refused plaintext connection from a non-loopback address; serve with --tls-* (or --insecure)")
	}
	return g
}

// Listener is a Server's listener: it refuses what Wrap says, counts the
// connections it handed out until they close, and closes one whose peer
// had MaxRefusedCalls calls refused.
type Listener struct {
	net.Listener
	srv         Server
	max         int64
	open        atomic.Int64
	overLog     *rateLog
	loopbackLog *rateLog // nil: every address is served
	refusedLog  *rateLog

	mu sync.Mutex
	// peers are the open TCP connections by remote address (unique while
	// open), for the tap's refusals to find theirs.
	peers map[string]*countedConn
}

// Options are the Server's options with refused calls counted against the
// connections of l: serve l with these, not Server.Options.
func (l *Listener) Options() []grpc.ServerOption {
	s := l.srv
	s.Policy.Refused = l.refused
	return s.Options()
}

func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.loopbackLog != nil && !auth.IsLoopback(c.RemoteAddr()) {
			l.loopbackLog.warn(time.Now(), "peer", c.RemoteAddr().String())
			c.Close()
			continue
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.overLog.warn(time.Now(), "peer", c.RemoteAddr().String())
			c.Close()
			continue
		}
		userTimeout(c)
		cc := &countedConn{Conn: c, l: l}
		if _, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			cc.key = c.RemoteAddr().String()
			l.mu.Lock()
			l.peers[cc.key] = cc
			l.mu.Unlock()
		}
		return cc, nil
	}
}

// refused counts a call refused on the connection of ctx's peer and closes
// the connection at MaxRefusedCalls: what gRPC keeps of a refused call is
// freed only then.
func (l *Listener) refused(ctx context.Context) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return
	}
	l.mu.Lock()
	c := l.peers[p.Addr.String()]
	l.mu.Unlock()
	if c != nil && c.refused.Add(1) == MaxRefusedCalls {
		l.refusedLog.warn(time.Now(), "peer", p.Addr.String())
		c.Close()
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
	l       *Listener
	key     string // in l.peers; empty for a non-TCP peer
	refused atomic.Int32
	closed  atomic.Bool
}

func (c *countedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
		if c.key != "" {
			c.l.mu.Lock()
			delete(c.l.peers, c.key)
			c.l.mu.Unlock()
		}
	}
	return c.Conn.Close()
}
