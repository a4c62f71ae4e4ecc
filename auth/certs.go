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

// CertFile and KeyFile name a role's certificate and key in a certs dir
// (coordinator and client; workers have one pair each, WorkerCertFile).
func CertFile(dir string, r Role) string { return filepath.Join(dir, string(r)+".pem") }

// KeyFile is the private key beside CertFile.
func KeyFile(dir string, r Role) string { return filepath.Join(dir, string(r)+"-key.pem") }

// WorkerCertFile names worker name's certificate: worker-NAME.pem.
func WorkerCertFile(dir, name string) string { return filepath.Join(dir, "worker-"+name+".pem") }

// WorkerKeyFile is the private key beside WorkerCertFile.
func WorkerKeyFile(dir, name string) string { return filepath.Join(dir, "worker-"+name+"-key.pem") }

// MaxWorkerName bounds a worker name in a certificate (a common name holds
// at most 64 characters).
const MaxWorkerName = 64

// CheckWorkerName refuses a name that cannot be a certificate's common
// name and a file name: 1..64 of A-Z a-z 0-9 . _ -, not starting with a dot.
func CheckWorkerName(name string) error {
	ok := name != "" && len(name) <= MaxWorkerName && name[0] != '.'
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}
	if !ok {
		return fmt.Errorf("worker name %s: want 1..%d of A-Z a-z 0-9 . _ - (not starting with a dot)", quoteName(name), MaxWorkerName)
	}
	return nil
}

func quoteName(s string) string {
	if len(s) > MaxWorkerName {
		return fmt.Sprintf("%q... (%d bytes)", s[:MaxWorkerName], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// InitCerts creates, in dir, a CA, the coordinator's and the client's
// certificates, and one certificate per worker name whose common name is
// that name: with mutual TLS a worker may register only under the name its
// certificate carries. hosts are the coordinator's names and addresses
// (localhost and 127.0.0.1 are always added). It refuses to overwrite any
// file, so a key left with other permissions is never kept: every key it
// writes is new and 0600.
func InitCerts(dir string, hosts, workers []string, valid time.Duration) error {
	for _, w := range workers {
		if err := CheckWorkerName(w); err != nil {
			return fmt.Errorf("certs init: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	caKey, caCert, err := newCA(valid)
	if err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	if err := writePair(filepath.Join(dir, Files.CA), filepath.Join(dir, Files.CAKey), caCert, caKey); err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caCert)
	if err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	iss := issuer{ca: ca, key: caKey, valid: valid}
	for _, r := range []Role{RoleCoordinator, RoleClient} {
		if err := iss.issue(CertFile(dir, r), KeyFile(dir, r), r, "writepath "+string(r), hosts); err != nil {
			return err
		}
	}
	return iss.workers(dir, workers)
}

// IssueWorkers adds a certificate per worker name to dir, signed by the CA
// InitCerts left there (ca.pem, ca-key.pem).
func IssueWorkers(dir string, names []string, valid time.Duration) error {
	for _, w := range names {
		if err := CheckWorkerName(w); err != nil {
			return fmt.Errorf("certs worker: %w", err)
		}
	}
	iss, err := loadIssuer(dir, valid)
	if err != nil {
		return fmt.Errorf("certs worker: %w", err)
	}
	return iss.workers(dir, names)
}

// checkPrivateDir refuses a certs directory others may write to: they
// could swap a key or certificate in.
func checkPrivateDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %v): chmod go-w it or choose another directory", dir, st.Mode().Perm())
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

// issuer signs leaf certificates with a CA.
type issuer struct {
	ca    *x509.Certificate
	key   *ecdsa.PrivateKey
	valid time.Duration
}

func loadIssuer(dir string, valid time.Duration) (issuer, error) {
	cb, err := os.ReadFile(filepath.Join(dir, Files.CA))
	if err != nil {
		return issuer{}, err
	}
	kb, err := os.ReadFile(filepath.Join(dir, Files.CAKey))
	if err != nil {
		return issuer{}, err
	}
	cp, _ := pem.Decode(cb)
	kp, _ := pem.Decode(kb)
	if cp == nil || kp == nil {
		return issuer{}, fmt.Errorf("%s or %s holds no PEM block", Files.CA, Files.CAKey)
	}
	ca, err := x509.ParseCertificate(cp.Bytes)
	if err != nil {
		return issuer{}, fmt.Errorf("%s: %w", Files.CA, err)
	}
	key, err := x509.ParseECPrivateKey(kp.Bytes)
	if err != nil {
		return issuer{}, fmt.Errorf("%s: %w", Files.CAKey, err)
	}
	return issuer{ca: ca, key: key, valid: valid}, nil
}

func (iss issuer) workers(dir string, names []string) error {
	for _, w := range names {
		if err := iss.issue(WorkerCertFile(dir, w), WorkerKeyFile(dir, w), RoleWorker, w, nil); err != nil {
			return err
		}
	}
	return nil
}

// issue writes a certificate for role r with common name cn (the
// coordinator's also names hosts) and its key.
func (iss issuer) issue(certPath, keyPath string, r Role, cn string, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("certs %s: %w", r, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"writepath"}, OrganizationalUnit: []string{string(r)}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(iss.valid),
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, iss.ca, &key.PublicKey, iss.key)
	if err != nil {
		return fmt.Errorf("certs %s: %w", r, err)
	}
	return writePair(certPath, keyPath, der, key)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still be valid.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// writePair writes a certificate (0644) and its key (0600). Neither may
// exist: O_EXCL, so an old key with looser permissions is never reused and
// nothing half-written is left looking valid.
func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := create(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return create(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func create(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("certs: %s exists; remove it or choose another directory", path)
	}
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	// The umask may have narrowed mode; never widened it. Set it exactly.
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("certs: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("certs: %s: %w", path, err)
	}
	return f.Close()
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
