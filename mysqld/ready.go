package mysqld

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// errNotReady is a server that answered but refused connections.
var errNotReady = errors.New("server answered with an error packet")

// ping connects to the socket and reads the server's first packet: a
// protocol-10 handshake means the server accepts connections; an error
// packet (0xff) or nothing means it does not, yet.
func ping(ctx context.Context, socket string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	var hdr [5]byte // 3-byte length, sequence, first payload byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	switch hdr[4] {
	case 10:
		return nil
	case 0xff:
		return errNotReady
	}
	return fmt.Errorf("unexpected handshake byte %#x", hdr[4])
}

// Ping reports whether the server accepts connections on its socket.
func (in *Instance) Ping(ctx context.Context) error {
	if err := ping(ctx, in.socket); err != nil {
		return fmt.Errorf("ping mysqld %s: %w", in.socket, err)
	}
	return nil
}

// waitReady polls until the server answers, the process exits or the
// timeout passes.
func (in *Instance) waitReady(ctx context.Context, p *process, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if ping(ctx, in.socket) == nil {
			return nil
		}
		select {
		case <-p.exited():
			return ErrExited
		case <-deadline.C:
			return fmt.Errorf("%w (%s)", ErrStartTimeout, timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
