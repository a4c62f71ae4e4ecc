package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// CancelWait bounds how long Run waits, after its context ended, for the
// coordinator's final record. Workers stop within about a second of the
// cancel (the coordinator waits CancelGrace for them); this leaves room for
// a loaded machine.
const CancelWait = 5 * time.Second

// Client talks to one coordinator.
type Client struct {
	ctl       writepathv1.ControlServiceClient
	conn      *grpc.ClientConn // nil when the caller owns the connection
	closeOnce sync.Once
	closeErr  error
}

// Dial connects to a coordinator; without options the link is insecure.
func Dial(addr string, opts ...grpc.DialOption) (*Client, error) {
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", addr, err)
	}
	return &Client{ctl: writepathv1.NewControlServiceClient(conn), conn: conn}, nil
}

// New wraps a ControlService client whose connection the caller owns.
func New(ctl writepathv1.ControlServiceClient) *Client { return &Client{ctl: ctl} }

// Close closes the connection Dial opened. It is safe to call more than
// once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if c.conn != nil {
			c.closeErr = c.conn.Close()
		}
	})
	return c.closeErr
}

// rpcErr words a failed call for a person: the coordinator's message
// without gRPC's "rpc error: code = ... desc =" wrapping, which is kept for
// errors.Is through Unwrap.
func rpcErr(what string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", what, err)
	}
	return &callError{what: what, st: st, err: err}
}

type callError struct {
	what string
	st   *status.Status
	err  error
}

func (e *callError) Error() string { return e.what + ": " + e.st.Message() }
func (e *callError) Unwrap() error { return e.err }

// GRPCStatus lets status.FromError see through the wording.
func (e *callError) GRPCStatus() *status.Status { return e.st }

// Control is the underlying ControlService client.
func (c *Client) Control() writepathv1.ControlServiceClient { return c.ctl }

// Run submits spec and follows the run to its end, calling onEvent for
// every merged interval and state change. If ctx ends first the run is
// cancelled on the coordinator, which stops it on every worker; Run then
// waits (at most CancelWait) for the final record and returns it with
// ctx's error.
func (c *Client) Run(ctx context.Context, spec *writepathv1.RunSpec, onEvent func(*writepathv1.WatchRunResponse)) (*writepathv1.Run, error) {
	sub, err := c.ctl.SubmitRun(ctx, &writepathv1.SubmitRunRequest{Spec: spec})
	if err != nil {
		return nil, rpcErr("submit", err)
	}
	id := sub.GetRun().GetId()
	run, err := c.Watch(ctx, id, onEvent)
	if ctx.Err() == nil {
		return run, err
	}
	return c.cancelAndWait(id, ctx.Err())
}

// cancelAndWait cancels a run the caller gave up on and waits, bounded, for
// the coordinator's final word.
func (c *Client) cancelAndWait(id string, cause error) (*writepathv1.Run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CancelWait)
	defer cancel()
	if _, err := c.ctl.CancelRun(ctx, &writepathv1.CancelRunRequest{RunId: id, Reason: "client interrupted: " + cause.Error()}); err != nil {
		return nil, rpcErr("cancel run "+id, err)
	}
	run, err := c.Watch(ctx, id, nil)
	if err != nil {
		return run, fmt.Errorf("run %s after cancel: %w", id, err)
	}
	return run, cause
}

// Watch follows a run (replaying what is stored) until it ends, and returns
// the final record.
func (c *Client) Watch(ctx context.Context, id string, onEvent func(*writepathv1.WatchRunResponse)) (*writepathv1.Run, error) {
	stream, err := c.ctl.WatchRun(ctx, &writepathv1.WatchRunRequest{RunId: id})
	if err != nil {
		return nil, rpcErr("watch run "+id, err)
	}
	var last *writepathv1.Run
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return last, nil
		}
		if err != nil {
			return last, rpcErr("watch run "+id, err)
		}
		if r := ev.GetRun(); r != nil {
			last = r
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
}

// Cancel cancels a run and returns its record.
func (c *Client) Cancel(ctx context.Context, id, reason string) (*writepathv1.Run, error) {
	resp, err := c.ctl.CancelRun(ctx, &writepathv1.CancelRunRequest{RunId: id, Reason: reason})
	if err != nil {
		return nil, rpcErr("cancel run "+id, err)
	}
	return resp.GetRun(), nil
}

// Workers lists the coordinator's workers.
func (c *Client) Workers(ctx context.Context) ([]*writepathv1.WorkerInfo, error) {
	resp, err := c.ctl.ListWorkers(ctx, &writepathv1.ListWorkersRequest{})
	if err != nil {
		return nil, rpcErr("list workers", err)
	}
	return resp.GetWorkers(), nil
}
