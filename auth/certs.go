package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Role is what a certificate's holder may do, carried in the subject's
// OrganizationalUnit.
type Role string

// Roles.
const (
	RoleCoordinator Role = "coordinator"
	RoleWorker      Role = "worker"
	RoleClient      Role = "client"
)

// Files names the PEM files InitCerts writes in its directory.
var Files = struct{ CA, CAKey string }{"ca.pem", "ca-key.pem"}

// CertFile and KeyFile name a role's certificate and key in a certs dir.
func CertFile(dir string, r Role) string { return filepath.Join(dir, string(r)+".pem") }

// KeyFile is the private key beside CertFile.
func KeyFile(dir string, r Role) string { return filepath.Join(dir, string(r)+"-key.pem") }

// InitCerts creates a CA and a certificate for each role in dir, for a quick
// start. hosts are the coordinator's names and addresses (localhost and
// 127.0.0.1 are always added). It refuses to overwrite an existing CA.
func InitCerts(dir string, hosts []string, valid time.Duration) error {
	if _, err := os.Stat(filepath.Join(dir, Files.CA)); err == nil {
		return fmt.Errorf("certs init %s: %s exists; remove it or choose another directory", dir, Files.CA)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	caKey, caCert, err := newCA(valid)
	if err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	if err := writePair(dir, Files.CA, Files.CAKey, caCert, caKey); err != nil {
		return err
	}
	for _, r := range []Role{RoleCoordinator, RoleWorker, RoleClient} {
		key, der, err := newLeaf(r, hosts, valid, caCert, caKey)
		if err != nil {
			return fmt.Errorf("certs init %s: %w", r, err)
		}
		if err := writePair(dir, filepath.Base(CertFile(dir, r)), filepath.Base(KeyFile(dir, r)), der, key); err != nil {
			return err
		}
	}
	return nil
}

func newCA(valid time.Duration) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "writepath CA", Organization: []string{"writepath"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(valid),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	return key, der, err
}

func newLeaf(r Role, hosts []string, valid time.Duration, caDER []byte, caKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte, error) {
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "writepath " + string(r), Organization: []string{"writepath"}, OrganizationalUnit: []string{string(r)}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(valid),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	if r == RoleCoordinator {
		for _, h := range append([]string{"localhost", "127.0.0.1", "::1"}, hosts...) {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	return key, der, err
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still be valid.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

func writePair(dir, certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	if err := os.WriteFile(filepath.Join(dir, certName), certPEM, 0o644); err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, keyName), keyPEM, 0o600); err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	return nil
}

// ErrNoRole reports a peer certificate without a writepath role.
var ErrNoRole = errors.New("certificate carries no writepath role")

// RoleOf returns the role of a verified peer certificate.
func RoleOf(c *x509.Certificate) (Role, error) {
	for _, ou := range c.Subject.OrganizationalUnit {
		switch r := Role(ou); r {
		case RoleCoordinator, RoleWorker, RoleClient:
			return r, nil
		}
	}
	return "", ErrNoRole
}
