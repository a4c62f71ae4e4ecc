package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

const healthService = "grpc.health.v1.Health"

// serve starts a real gRPC server on loopback with the health service under
// p and returns its address.
func serve(t *testing.T, p Policy) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(p.ServerOptions()...)
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

func check(addr string, opts ...grpc.DialOption) error {
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func initDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := InitCerts(dir, []string{"coord.example"}, []string{"w1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	return dir
}

func files(dir string, r Role) TLSFiles {
	if r == RoleWorker {
		return TLSFiles{Cert: WorkerCertFile(dir, "w1"), Key: WorkerKeyFile(dir, "w1"), CA: filepath.Join(dir, Files.CA)}
	}
	return TLSFiles{Cert: CertFile(dir, r), Key: KeyFile(dir, r), CA: filepath.Join(dir, Files.CA)}
}

func TestMutualTLSRoles(t *testing.T) {
	dir, other := initDir(t), initDir(t)
	srvConf, err := ServerConfig(files(dir, RoleCoordinator))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, Policy{TLS: srvConf, Roles: map[string][]Role{healthService: {RoleClient}}})
	dial := func(f TLSFiles) error {
		c, err := ClientConfig(f, "localhost")
		if err != nil {
			t.Fatal(err)
		}
		return check(addr, DialOptions(c, "")...)
	}
	if err := dial(files(dir, RoleClient)); err != nil {
		t.Errorf("client certificate: %v; want success", err)
	}
	if err := dial(files(dir, RoleWorker)); status.Code(err) != codes.PermissionDenied {
		t.Errorf("worker certificate on a client-only service: %v; want PermissionDenied", err)
	}
	// A certificate from another CA: the handshake fails both ways.
	f := files(other, RoleClient)
	f.CA = filepath.Join(dir, Files.CA)
	if err := dial(f); status.Code(err) != codes.Unavailable {
		t.Errorf("certificate of a foreign CA: %v; want the connection refused", err)
	}
	// Plaintext to a TLS coordinator never reaches a handler.
	if err := check(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err == nil {
		t.Error("plaintext call to a TLS coordinator succeeded")
	}
}

func TestBearerToken(t *testing.T) {
	addr := serve(t, Policy{Token: "s3cret"})
	plain := grpc.WithTransportCredentials(insecure.NewCredentials())
	tests := []struct {
		token string
		want  codes.Code
	}{
		{"s3cret", codes.OK},
		{"", codes.Unauthenticated},
		{"guess", codes.Unauthenticated},
	}
	for _, tt := range tests {
		err := check(addr, append(DialOptions(nil, tt.token), plain)...)
		if status.Code(err) != tt.want {
			t.Errorf("token %q: %v; want %v", tt.token, err, tt.want)
		}
	}
}

func TestInitCertsRefusesOverwrite(t *testing.T) {
	dir := initDir(t)
	if err := InitCerts(dir, nil, nil, time.Hour); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second InitCerts = %v; want a refusal", err)
	}
	for _, k := range []string{KeyFile(dir, RoleClient), KeyFile(dir, RoleCoordinator), WorkerKeyFile(dir, "w1"), filepath.Join(dir, Files.CAKey)} {
		if st, err := os.Stat(k); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, %v; want 0600", k, st.Mode(), err)
		}
	}
}

// TestInitCertsRefusesLeftoverKey: a key file left in the directory (here
// 0644, readable by anyone) is never kept under a new CA.
func TestInitCertsRefusesLeftoverKey(t *testing.T) {
	dir := t.TempDir()
	old := KeyFile(dir, RoleClient)
	if err := os.WriteFile(old, []byte("old key"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := InitCerts(dir, nil, nil, time.Hour)
	if err == nil || !strings.Contains(err.Error(), old) || !strings.Contains(err.Error(), "exists") {
		t.Errorf("InitCerts over a leftover 0644 key = %v; want a refusal naming %s", err, old)
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if err := InitCerts(open, nil, nil, time.Hour); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("InitCerts in a 0777 directory = %v; want a refusal", err)
	}
}

func TestIssueWorkers(t *testing.T) {
	dir := initDir(t)
	if err := IssueWorkers(dir, []string{"db2", "db3"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "two words", strings.Repeat("n", 65)} {
		if err := IssueWorkers(dir, []string{bad}, time.Hour); err == nil {
			t.Errorf("IssueWorkers(%q) succeeded", bad)
		}
	}
	pair, err := tls.LoadX509KeyPair(WorkerCertFile(dir, "db2"), WorkerKeyFile(dir, "db2"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if r, err := RoleOf(c); r != RoleWorker || err != nil || c.Subject.CommonName != "db2" {
		t.Errorf("db2's certificate: role %v (%v), CN %q; want worker, db2", r, err, c.Subject.CommonName)
	}
	if names := NamesOf(c); len(names) != 1 || names[0] != "db2" {
		t.Errorf("NamesOf(db2's certificate) = %v", names)
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	good, empty := filepath.Join(dir, "t"), filepath.Join(dir, "e")
	os.WriteFile(good, []byte("  abc \nrest"), 0o600)
	os.WriteFile(empty, []byte("\n"), 0o600)
	if tok, err := ReadToken(good); tok != "abc" || err != nil {
		t.Errorf("ReadToken(good) = %q, %v", tok, err)
	}
	if _, err := ReadToken(empty); err == nil {
		t.Error("ReadToken(empty) succeeded; an empty token would admit anyone")
	}
}

func TestTLSFilesValidate(t *testing.T) {
	if err := (TLSFiles{Cert: "c"}).Validate(); err == nil {
		t.Error("Validate() with only a cert succeeded")
	}
	if err := (TLSFiles{}).Validate(); err != nil {
		t.Errorf("Validate() with no TLS = %v", err)
	}
	var pathErr *os.PathError
	if _, err := ServerConfig(TLSFiles{Cert: "/nonexistent", Key: "/nonexistent", CA: "/nonexistent"}); !errors.As(err, &pathErr) {
		t.Errorf("ServerConfig(missing files) = %v; want a path error", err)
	}
}
