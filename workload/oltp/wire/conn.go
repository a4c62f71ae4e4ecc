package wire

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"
)

// Conn is a logged-in connection before Detach: its requests block the
// calling goroutine on the Go runtime's poller, which suits setting up
// (preparing statements) but not the hot path.
type Conn struct {
	sn *sniffer
	dc driver.Conn
	// Caps are the capability flags the client asked for and the server
	// has (the driver sends only flags the server announced).
	Caps uint32
	buf  []byte
	// z is the compressed framing (Caps has CapCompress), nil without.
	z *Compressor
}

// Dial logs in with the driver, using cfg (which it does not change),
// and returns the connection in its setup phase.
func Dial(ctx context.Context, cfg *mysql.Config) (*Conn, error) {
	cfg = cfg.Clone()
	var sn *sniffer
	var d net.Dialer
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true) // the default; stated because every request is one small packet
		}
		sn = &sniffer{Conn: nc}
		return sn, nil
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql config: %w", err)
	}
	dc, err := connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if !sn.seen {
		_ = dc.Close()
		return nil, errors.New("login: the driver sent no handshake response")
	}
	c := &Conn{sn: sn, dc: dc, Caps: sn.caps}
	if c.Caps&CapCompress != 0 {
		c.z = NewCompressor()
	}
	return c, nil
}

// sniffer is the driver's socket. It reads the capability flags from the
// first packet the client writes (the handshake response, or the SSL
// request before it; both start with them), and once detached refuses
// writes, so that closing the driver's connection sends no COM_QUIT on a
// socket that lives on.
type sniffer struct {
	net.Conn
	seen     bool
	caps     uint32
	detached atomic.Bool
}

func (s *sniffer) Write(p []byte) (int, error) {
	if s.detached.Load() {
		return 0, net.ErrClosed
	}
	if !s.seen && len(p) >= 8 {
		s.caps, s.seen = binary.LittleEndian.Uint32(p[4:8]), true
	}
	return s.Conn.Write(p)
}

// Interrupt makes a request in flight (and later ones) fail at once; the
// connection is unusable afterwards. Safe from any goroutine.
func (c *Conn) Interrupt() { _ = c.sn.Conn.SetDeadline(time.Unix(1, 0)) }

// roundTrip sends the request in c.buf and returns the first packet of
// the answer (valid until the next call).
func (c *Conn) roundTrip() ([]byte, error) {
	if err := c.send(); err != nil {
		return nil, err
	}
	return c.read()
}

// send sends the request in c.buf, in a frame if compressed.
func (c *Conn) send() error {
	req, err := Finish(c.buf)
	if err == nil && c.z != nil {
		req, err = c.z.Frame(req, 0)
	}
	if err != nil {
		return err
	}
	_, err = c.sn.Conn.Write(req)
	return err
}

// Compressor returns the connection's compressed framing, nil when the
// connection is not compressed; it goes with the socket on Detach.
func (c *Conn) Compressor() *Compressor { return c.z }

// read reads one packet.
func (c *Conn) read() ([]byte, error) {
	if c.z != nil {
		return c.readFramed()
	}
	var h [4]byte
	if _, err := io.ReadFull(c.sn.Conn, h[:]); err != nil {
		return nil, err
	}
	size := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if size == maxPayload {
		return nil, ErrMultiPacket
	}
	if cap(c.buf) < size {
		c.buf = make([]byte, size)
	}
	p := c.buf[:size]
	if _, err := io.ReadFull(c.sn.Conn, p); err != nil {
		return nil, err
	}
	return p, nil
}

// readFramed reads one packet of a compressed connection, reading frames
// until one is whole. (Setup only: a frame at a time, into its own buffer.)
func (c *Conn) readFramed() ([]byte, error) {
	var frame []byte
	for {
		p, used, ok, err := c.z.Packet(frame)
		if err != nil {
			return nil, err
		}
		if ok {
			if used != len(frame) {
				return nil, fmt.Errorf("%w: a frame read whole was taken in part", ErrBadFrame)
			}
			return p, nil
		}
		var h [frameHeader]byte
		if _, err := io.ReadFull(c.sn.Conn, h[:]); err != nil {
			return nil, err
		}
		clen := uint24(h[:])
		if clen > MaxFrame {
			return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrBadFrame, clen, MaxFrame)
		}
		frame = append(append(frame[:0], h[:]...), make([]byte, clen)...)
		if _, err := io.ReadFull(c.sn.Conn, frame[frameHeader:]); err != nil {
			return nil, err
		}
	}
}

// Prepare makes a server-side prepared statement and returns its id.
// A server error is a *mysql.MySQLError.
func (c *Conn) Prepare(query string) (uint32, error) {
	c.buf = append(Header(c.buf, ComStmtPrepare), query...)
	p, err := c.roundTrip()
	if err != nil {
		return 0, err
	}
	if IsErr(p) {
		return 0, ParseErr(p)
	}
	ok, err := ParsePrepareOK(p)
	if err != nil {
		return 0, err
	}
	for range ok.Trailing(c.Caps) {
		if _, err := c.read(); err != nil {
			return 0, err
		}
	}
	return ok.ID, nil
}

// Exec runs a text statement that returns no rows and returns the rows
// it affected.
func (c *Conn) Exec(query string) (uint64, error) {
	c.buf = append(Header(c.buf, ComQuery), query...)
	return c.affected()
}

// Detach hands the socket over: it returns a non-blocking descriptor of
// it, owned by the caller (close it with unix.Close, after sending
// ComQuit if the connection is healthy), and releases everything else.
func (c *Conn) Detach() (fd int, err error) {
	defer c.close()
	sc, ok := c.sn.Conn.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("detach %T: no file descriptor", c.sn.Conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("detach: %w", err)
	}
	fd = -1
	cerr := raw.Control(func(s uintptr) {
		fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		return -1, fmt.Errorf("detach: %w", cerr)
	}
	if err != nil {
		return -1, fmt.Errorf("detach: dup: %w", err)
	}
	// The runtime made the socket non-blocking; the duplicate shares that
	// flag, but say so rather than rely on it.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("detach: %w", err)
	}
	return fd, nil
}

// Close ends a connection that was not detached (COM_QUIT first).
func (c *Conn) Close() {
	if !c.sn.detached.Load() {
		_ = c.dc.Close()
	}
}

// close releases the driver's side without a word to the server.
func (c *Conn) close() {
	c.sn.detached.Store(true)
	_ = c.dc.Close() // its COM_QUIT fails on the detached socket; then it closes it
}

// Execute runs prepared statement id with args and returns the rows it
// affected. Set types on a statement's first execution.
func (c *Conn) Execute(id uint32, args []Value, types bool) (uint64, error) {
	c.buf = AppendExecute(Header(c.buf, ComStmtExecute), id, args, types)
	return c.affected()
}

// affected sends the request in c.buf and reads its OK (the rows
// affected) or ERR answer.
func (c *Conn) affected() (uint64, error) {
	p, err := c.roundTrip()
	if err != nil {
		return 0, err
	}
	if IsErr(p) {
		return 0, ParseErr(p)
	}
	return ParseOK(p)
}

// CloseStmt frees prepared statement id on the server (no answer comes).
func (c *Conn) CloseStmt(id uint32) error {
	c.buf = binary.LittleEndian.AppendUint32(Header(c.buf, ComStmtClose), id)
	return c.send()
}
