package oltp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/mysqld"
)

// TestMySQLSSL: with --mysql-ssl a server without TLS (the shared test
// server) is used in plaintext, as sysbench's client does; one that
// offers TLS (a second server with a certificate made here) is refused,
// saying why, before anything is sent.
func TestMySQLSSL(t *testing.T) {
	pw, _ := testServer(t).Password()
	plain := ConnOptions{Socket: testServer(t).Socket(), User: "root", Password: pw, SSL: true}
	if err := checkSSL(t.Context(), plain); err != nil {
		t.Fatalf("checkSSL on a server without TLS = %v; want nil", err)
	}
	// The shared server again, restarted with a certificate, then as it was.
	in := testServer(t)
	cert, key := writeCert(t, reachableTempDir(t))
	ctx := context.Background()
	was := in.Settings()
	restart := func(s []mysqld.Setting) {
		if err := in.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		in.SetSettings(s)
		if err := in.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	restart(append(append([]mysqld.Setting(nil), was...), mysqld.Setting{Key: "ssl_cert", Value: cert}, mysqld.Setting{Key: "ssl_key", Value: key}))
	defer restart(was)
	err := checkSSL(t.Context(), ConnOptions{Socket: in.Socket(), User: "root", Password: pw, SSL: true})
	if err == nil || !strings.Contains(err.Error(), "offers TLS") {
		t.Errorf("checkSSL on a server with TLS = %v; want a refusal saying it offers TLS", err)
	}
}

// writeCert writes a self-signed certificate and its key under dir.
func writeCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, blk := range map[string]*pem.Block{cert: {Type: "CERTIFICATE", Bytes: der}, key: {Type: "EC PRIVATE KEY", Bytes: kb}} {
		// Readable by the server's account (mysql, when the test runs as root).
		if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}
