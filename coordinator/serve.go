package coordinator

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"

	"github.com/writepath/writepath/coordinator/store"
)

// Serve runs a coordinator on lis with its results in the store at dbPath
// until ctx ends; then runs in flight are stored interrupted, the server
// stops and the store closes. opts are the server's options: the fabric's
// limits, keepalive and credentials (package transport).
func Serve(ctx context.Context, lis net.Listener, dbPath string, cfg Config, opts ...grpc.ServerOption) error {
	return ServeWith(ctx, lis, dbPath, cfg, nil, opts...)
}

// ServeWith is Serve that first hands the coordinator to started, if not
// nil: a metrics collector reads its Stats while it serves.
func ServeWith(ctx context.Context, lis net.Listener, dbPath string, cfg Config, started func(*Coordinator), opts ...grpc.ServerOption) error {
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
	s := grpc.NewServer(opts...)
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
