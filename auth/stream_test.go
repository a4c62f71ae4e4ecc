package auth

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestStreamsPerCertificate: one worker certificate holds at most the
// limit of streams at once; a closed stream gives its slot back; another
// certificate (the client's) is not counted.
func TestStreamsPerCertificate(t *testing.T) {
	dir := initDir(t)
	srvConf, err := ServerConfig(files(dir, RoleCoordinator))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, Policy{TLS: srvConf, StreamsPerCertificate: 2})
	dial := func(r Role) *grpc.ClientConn {
		c, err := ClientConfig(files(dir, r), "localhost")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := grpc.NewClient(addr, DialOptions(c, "")...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	watch := func(conn *grpc.ClientConn) (context.CancelFunc, error) {
		sctx, scancel := context.WithCancel(ctx)
		w, err := healthpb.NewHealthClient(conn).Watch(sctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = w.Recv() // the first status arrives once the stream is admitted
		}
		return scancel, err
	}
	worker := dial(RoleWorker)
	stop1, err1 := watch(worker)
	_, err2 := watch(worker)
	if err1 != nil || err2 != nil {
		t.Fatalf("two streams of one worker certificate: %v, %v", err1, err2)
	}
	if _, err := watch(dial(RoleWorker)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a third stream of the same certificate, on another connection: %v; want ResourceExhausted", err)
	}
	if _, err := watch(dial(RoleClient)); err != nil {
		t.Errorf("a client certificate's stream: %v", err)
	}
	stop1()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := watch(worker)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after one stream closed, a new one: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
