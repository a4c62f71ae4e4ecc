package transport

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// captureLog is a slog.Handler keeping each record as one line.
type captureLog struct {
	mu sync.Mutex
	ls []string
}

func (c *captureLog) Enabled(context.Context, slog.Level) bool { return true }
func (c *captureLog) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *captureLog) WithGroup(string) slog.Handler            { return c }
func (c *captureLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	c.mu.Lock()
	c.ls = append(c.ls, b.String())
	c.mu.Unlock()
	return nil
}

func (c *captureLog) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ls...)
}

// echoServer answers UnaryCall with a payload of the requested size and
// holds StreamingInputCall open until the client ends it.
type echoServer struct {
	testgrpc.UnimplementedTestServiceServer
}

func (echoServer) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: make([]byte, req.GetResponseSize())}}, nil
}

func (echoServer) StreamingInputCall(s testgrpc.TestService_StreamingInputCallServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			return nil
		}
	}
}

// serveEcho serves echoServer on lis with opts until the test ends.
func serveEcho(t *testing.T, lis net.Listener, opts ...grpc.ServerOption) {
	t.Helper()
	s := grpc.NewServer(opts...)
	testgrpc.RegisterTestServiceServer(s, echoServer{})
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
}

// call makes one UnaryCall asking for size bytes back.
func call(target string, size int32, opts ...grpc.DialOption) error {
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = testgrpc.NewTestServiceClient(conn).UnaryCall(ctx, &testgrpc.SimpleRequest{ResponseSize: size})
	return err
}

func slogOf(h slog.Handler) *slog.Logger { return slog.New(h) }

// emptyMsg is a message with no fields, for calls that never get an answer.
type emptyMsg = testgrpc.Empty

// callWith makes one UnaryCall carrying body.
func callWith(target string, body []byte, opts ...grpc.DialOption) error {
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = testgrpc.NewTestServiceClient(conn).UnaryCall(ctx, &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: body}})
	return err
}
