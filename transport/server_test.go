package transport

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/writepath/writepath/auth"
)

func TestMaxConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logged := &captureLog{}
	g := Server{MaxConnections: 2, Log: slogOf(logged)}.Wrap(l)
	defer g.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := g.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	a, b := <-accepted, <-accepted
	// The third is closed by the server: its read ends.
	clients[2].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := clients[2].Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("third connection over a limit of 2: read %v; want it closed", err)
	}
	if l := logged.lines(); len(l) != 1 || !strings.Contains(l[0], "the limit (--max-connections)") {
		t.Errorf("log = %q; want the limit named", l)
	}
	// A closed connection gives its slot back.
	a.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case d := <-accepted:
		d.Close()
	case <-time.After(5 * time.Second):
		t.Error("a connection after one closed was not accepted")
	}
	b.Close()
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestCallTimeout: a unary call without a deadline to a server that never
// answers ends with DeadlineExceeded.
func TestCallTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	defer close(block)
	s := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error { <-block; return nil }))
	go s.Serve(l)
	defer s.Stop()
	conn, err := grpc.NewClient(l.Addr().String(), Client{}.dialOptions(200*time.Millisecond)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Invoke(context.Background(), "/x.Y/Z", &emptyMsg{}, &emptyMsg{})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("call to a server that never answers: %v; want DeadlineExceeded", err)
	}
}

func TestCheckPlaintext(t *testing.T) {
	ctx := context.Background()
	for _, target := range []string{"127.0.0.1:7470", "[::1]:7470", "localhost:7470", ":7470", "unix:///tmp/x.sock", "dns:///127.0.0.1:1"} {
		if err := CheckPlaintext(ctx, target, false); err != nil {
			t.Errorf("CheckPlaintext(%q) = %v; want nil (this host)", target, err)
		}
	}
	for _, target := range []string{"10.0.0.10:7700", "192.0.2.1:1", "[2001:db8::1]:7700"} {
		err := CheckPlaintext(ctx, target, false)
		if err == nil || !strings.Contains(err.Error(), "--insecure") {
			t.Errorf("CheckPlaintext(%q) = %v; want a refusal naming --insecure", target, err)
		}
		if err := CheckPlaintext(ctx, target, true); err != nil {
			t.Errorf("CheckPlaintext(%q, insecure) = %v", target, err)
		}
	}
	long := strings.Repeat("h", 5<<20) + ":1"
	if err := CheckPlaintext(ctx, long, false); err == nil || len(err.Error()) > 400 {
		t.Errorf("CheckPlaintext(5 MB name): %d-byte error; want a short refusal", len(err.Error()))
	}
}

func TestRateLog(t *testing.T) {
	logged := &captureLog{}
	r := newRateLog(slogOf(logged), "refused")
	t0 := time.Now()
	for i := range 5 {
		r.warn(t0.Add(time.Duration(i) * time.Second))
	}
	r.warn(t0.Add(RefusedLogEvery + time.Second))
	l := logged.lines()
	if len(l) != 2 || !strings.Contains(l[1], "suppressed_since_last=4") {
		t.Errorf("lines = %q; want 2, the second counting 4 suppressed", l)
	}
}

// TestRefusedCallsCloseTheConnection: gRPC frees what it made for a call
// its tap refused only when the connection ends, so the listener closes a
// connection after MaxRefusedCalls refusals; the peer redials and is
// refused again, and a caller with the token is served throughout.
func TestRefusedCallsCloseTheConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logged := &captureLog{}
	lis := Server{Policy: auth.Policy{Token: "right"}, Log: slogOf(logged)}.Wrap(l)
	serveEcho(t, lis, lis.Options()...)
	conn, err := grpc.NewClient(l.Addr().String(), Client{Token: "wrong"}.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := testgrpc.NewTestServiceClient(conn)
	for i := range MaxRefusedCalls + 8 {
		if _, err := cl.UnaryCall(ctx, &testgrpc.SimpleRequest{}); status.Code(err) != codes.Unauthenticated && status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d with the wrong token: %v; want Unauthenticated (or Unavailable while the connection closes)", i, err)
		}
	}
	closed := func() bool {
		for _, line := range logged.lines() {
			if strings.Contains(line, "closed a connection after 128 refused calls") {
				return true
			}
		}
		return false
	}
	for !closed() {
		if ctx.Err() != nil {
			t.Fatalf("log = %q; want the connection closed after %d refused calls", logged.lines(), MaxRefusedCalls)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := call(l.Addr().String(), 1, Client{Token: "right"}.DialOptions()...); err != nil {
		t.Errorf("a caller with the token: %v", err)
	}
}
