package auth

import (
	"net"
)

// LoopbackOnly wraps a plaintext listener so that it accepts connections
// from loopback addresses only; others are closed at once and reported to
// refused (which may be nil). Start a coordinator with --insecure to serve
// plaintext beyond loopback.
func LoopbackOnly(l net.Listener, refused func(remote net.Addr)) net.Listener {
	return &loopbackListener{Listener: l, refused: refused}
}

type loopbackListener struct {
	net.Listener
	refused func(net.Addr)
}

func (l *loopbackListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if IsLoopback(c.RemoteAddr()) {
			return c, nil
		}
		if l.refused != nil {
			l.refused(c.RemoteAddr())
		}
		c.Close()
	}
}

// IsLoopback reports whether addr is a loopback TCP address or a unix socket.
func IsLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
