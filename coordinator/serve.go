package coordinator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/writepath/writepath/coordinator/store"
)

// serverKeepalive makes the server probe idle transports, so a transport
// to a worker behind a cut link is torn down instead of lingering. The
// heartbeat timeout, not this, decides when a worker is lost.
func serverKeepalive() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	}
}

// Serve runs a coordinator on lis with its results in the store at dbPath
// until ctx ends; then runs in flight are stored interrupted, the server
// stops and the store closes. extra adds server options (credentials,
// interceptors).
func Serve(ctx context.Context, lis net.Listener, dbPath string, cfg Config, extra ...grpc.ServerOption) error {
	return ServeWith(ctx, lis, dbPath, cfg, nil, extra...)
}

// ServeWith is Serve that first hands the coordinator to started, if not
// nil: a metrics collector reads its Stats while it serves.
func ServeWith(ctx context.Context, lis net.Listener, dbPath string, cfg Config, started func(*Coordinator), extra ...grpc.ServerOption) error {
	st, err := store.Open(dbPath)
	if err != nil {
		return err
	}
	defer st.Close()
	c, err := New(cfg, st)
	if err != nil {
		return err
	}
	if started != nil {
		started(c)
	}
	s := grpc.NewServer(append(serverKeepalive(), extra...)...)
	c.Register(s)
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(lis) }() // owned: Serve waits on errc below
	select {
	case err = <-errc:
		c.Close()
		return fmt.Errorf("serve %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	c.Close()
	s.Stop()
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve %s: %w", lis.Addr(), err)
	}
	return nil
}
