package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/writepath/writepath/auth"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/coordinator"
	"github.com/writepath/writepath/metrics"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/worker"
)

// secureFabric is a coordinator served the way `writepath coordinator`
// serves it, on loopback.
type secureFabric struct {
	addr string
	exp  *metrics.Exporter
}

func serveCoordinator(t *testing.T, sf serveFlags) secureFabric {
	t.Helper()
	return serveCoordinatorOn(t, sf, filepath.Join(t.TempDir(), "w.db"))
}

// serveCoordinatorOn is serveCoordinator with its store at db.
func serveCoordinatorOn(t *testing.T, sf serveFlags, db string) secureFabric {
	t.Helper()
	srv, err := sf.server(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	exp := metrics.New()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := coordinator.Config{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 3 * time.Second,
		WorkerIdentity: auth.WorkerNames}
	go func() {
		opts := append(lis.Options(), grpc.StatsHandler(exp.StatsHandler()))
		done <- coordinator.ServeWith(ctx, lis, db, cfg, exp.Attach, opts...)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return secureFabric{addr: lis.Addr().String(), exp: exp}
}

// startWorker runs a worker with conn's credentials until the test ends.
func startWorker(t *testing.T, name string, conn connFlags) {
	t.Helper()
	dial, err := conn.dialOptions()
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(worker.Config{Coordinator: conn.coordinator, Name: name, DataDir: t.TempDir(),
		DialOptions: dial, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// workerNames lists the connected workers as conn sees them.
func workerNames(conn connFlags) ([]string, error) {
	dial, err := conn.dialOptions()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(conn.coordinator, dial...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, err := c.Workers(ctx)
	var names []string
	for _, w := range ws {
		if w.GetConnected() {
			names = append(names, w.GetName())
		}
	}
	return names, err
}

func tlsFiles(dir string, r auth.Role) auth.TLSFiles {
	return auth.TLSFiles{Cert: auth.CertFile(dir, r), Key: auth.KeyFile(dir, r), CA: filepath.Join(dir, auth.Files.CA)}
}

// workerFiles are worker name's certificate files.
func workerFiles(dir, name string) auth.TLSFiles {
	return auth.TLSFiles{Cert: auth.WorkerCertFile(dir, name), Key: auth.WorkerKeyFile(dir, name), CA: filepath.Join(dir, auth.Files.CA)}
}

// certsDir is `writepath certs init DIR --worker good --worker w1 --worker w2`.
func certsDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := auth.InitCerts(dir, nil, []string{"good", "w1", "w2"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMutualTLSRefusesBadCertificates serves with mutual TLS: a worker
// with the worker certificate joins; one whose certificate comes from
// another CA, or carries the client role, never registers; the CLI needs
// the client role, and plaintext gets nowhere.
func TestMutualTLSRefusesBadCertificates(t *testing.T) {
	dir, foreign := certsDir(t), certsDir(t)
	f := serveCoordinator(t, serveFlags{tls: tlsFiles(dir, auth.RoleCoordinator)})
	as := func(files auth.TLSFiles) connFlags { return connFlags{coordinator: f.addr, tls: files} }
	startWorker(t, "good", as(workerFiles(dir, "good")))
	bad := workerFiles(foreign, "good")
	bad.CA = filepath.Join(dir, auth.Files.CA) // trusts the coordinator, but is not trusted
	startWorker(t, "foreign-ca", as(bad))
	startWorker(t, "client-role", as(tlsFiles(dir, auth.RoleClient)))

	cli := as(tlsFiles(dir, auth.RoleClient))
	eventually(t, "the good worker registered", func() error {
		names, err := workerNames(cli)
		if err != nil || len(names) != 1 || names[0] != "good" {
			return fmt.Errorf("connected workers = %v, %v; want [good]", names, err)
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // the refused ones retried meanwhile
	if names, err := workerNames(cli); len(names) != 1 || err != nil {
		t.Errorf("connected workers = %v, %v; want only [good]", names, err)
	}
	if _, err := workerNames(as(workerFiles(dir, "good"))); status.Code(err) != codes.PermissionDenied {
		t.Errorf("ListWorkers with a worker certificate: %v; want PermissionDenied", err)
	}
	if _, err := workerNames(connFlags{coordinator: f.addr}); err == nil {
		t.Error("ListWorkers over plaintext to a TLS coordinator succeeded")
	}
	if n := receivedBytes(t, f.exp); n <= 0 {
		t.Errorf("writepath_received_bytes_total = %v after a worker's hello and heartbeats; want > 0", n)
	}
}

func receivedBytes(t *testing.T, exp *metrics.Exporter) float64 {
	mfs, err := exp.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "writepath_received_bytes_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return -1
}

// TestTokenRequired serves plaintext on loopback with a token: calls
// without it, or with another, are refused.
func TestTokenRequired(t *testing.T) {
	dir := t.TempDir()
	good, wrong := filepath.Join(dir, "token"), filepath.Join(dir, "wrong")
	os.WriteFile(good, []byte("s3cret\n"), 0o600)
	os.WriteFile(wrong, []byte("guess\n"), 0o600)
	f := serveCoordinator(t, serveFlags{tokenFile: good})
	if _, err := workerNames(connFlags{coordinator: f.addr, tokenFile: good}); err != nil {
		t.Errorf("with the token: %v", err)
	}
	for _, tok := range []string{"", wrong} {
		if _, err := workerNames(connFlags{coordinator: f.addr, tokenFile: tok}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("token file %q: %v; want Unauthenticated", tok, err)
		}
	}
}

func TestServeFlagsValidate(t *testing.T) {
	dir := certsDir(t)
	if err := (&serveFlags{tls: tlsFiles(dir, auth.RoleCoordinator), insecure: true}).Validate(); err == nil {
		t.Error("--insecure with --tls-* validated")
	}
	if err := (&serveFlags{tls: auth.TLSFiles{Cert: "c"}}).Validate(); err == nil {
		t.Error("--tls-cert alone validated")
	}
	modes := map[string]serveFlags{
		"mutual TLS": {tls: tlsFiles(dir, auth.RoleCoordinator), maxConnections: 1},
		"INSECURE":   {insecure: true, maxConnections: 1},
		"loopback":   {maxConnections: 1},
	}
	for want, sf := range modes {
		srv, err := sf.server(nil)
		if err != nil || !strings.Contains(srv.Mode(), want) {
			t.Errorf("%+v.server() mode = %q, %v; want it to say %q", sf, srv.Mode(), err, want)
		}
		if err := sf.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v", sf, err)
		}
	}
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWorkerNameBoundToCertificate serves mutual TLS as `writepath
// coordinator` does: w1 registers with its own certificate; w2's
// certificate used under the name w1 (a stolen certificate taking over
// another worker, and its jobs) or under a new name is refused, and the
// real w1's session is never replaced.
func TestWorkerNameBoundToCertificate(t *testing.T) {
	dir := certsDir(t)
	f := serveCoordinator(t, serveFlags{tls: tlsFiles(dir, auth.RoleCoordinator), maxConnections: 64})
	cli := connFlags{coordinator: f.addr, tls: tlsFiles(dir, auth.RoleClient)}
	startWorker(t, "w1", connFlags{coordinator: f.addr, tls: workerFiles(dir, "w1")})
	var since time.Time
	eventually(t, "w1 registered", func() error {
		ws, err := connectedWorkers(cli)
		if err != nil || len(ws) != 1 || ws[0].GetName() != "w1" {
			return fmt.Errorf("connected = %v, %v; want [w1]", ws, err)
		}
		since = ws[0].GetConnectedSince().AsTime()
		return nil
	})
	stolen := connFlags{coordinator: f.addr, tls: workerFiles(dir, "w2")}
	startWorker(t, "w1", stolen)
	startWorker(t, "w3", stolen)
	// The impostors retry every 20-200 ms meanwhile.
	time.Sleep(time.Second)
	ws, err := connectedWorkers(cli)
	if err != nil || len(ws) != 1 || ws[0].GetName() != "w1" || !ws[0].GetConnectedSince().AsTime().Equal(since) {
		t.Fatalf("after w2's certificate tried the names w1 and w3: connected = %v, %v; want only the original w1 (since %v)", ws, err, since)
	}
	// What the impostor hears.
	dial, err := stolen.dialOptions()
	if err != nil {
		t.Fatal(err)
	}
	err = helloAs(f.addr, "w1", dial)
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `"w2"`) {
		t.Errorf("hello as w1 with w2's certificate: %v; want PermissionDenied naming the certificate's name w2", err)
	}
}

func connectedWorkers(conn connFlags) ([]*writepathv1.WorkerInfo, error) {
	dial, err := conn.dialOptions()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(conn.coordinator, dial...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, err := c.Workers(ctx)
	var out []*writepathv1.WorkerInfo
	for _, w := range ws {
		if w.GetConnected() {
			out = append(out, w)
		}
	}
	return out, err
}

// helloAs opens a worker stream, says Hello as name and returns how the
// coordinator ends it.
func helloAs(addr, name string, dial []grpc.DialOption) error {
	conn, err := grpc.NewClient(addr, dial...)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := writepathv1.NewWorkerServiceClient(conn).Connect(ctx)
	if err != nil {
		return err
	}
	if err := s.Send(&writepathv1.ConnectRequest{Msg: &writepathv1.ConnectRequest_Hello{Hello: &writepathv1.Hello{Name: name}}}); err != nil {
		return err
	}
	for {
		if _, err := s.Recv(); err != nil {
			return err
		}
	}
}
