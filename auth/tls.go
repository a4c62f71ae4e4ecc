package auth

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLSFiles are the --tls-cert, --tls-key and --tls-ca flags.
type TLSFiles struct{ Cert, Key, CA string }

// Enabled reports whether any TLS file was given.
func (f TLSFiles) Enabled() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// Validate reports missing halves: TLS needs all three files.
func (f TLSFiles) Validate() error {
	if f.Enabled() && (f.Cert == "" || f.Key == "" || f.CA == "") {
		return fmt.Errorf("--tls-cert, --tls-key and --tls-ca go together (got cert=%q key=%q ca=%q)", f.Cert, f.Key, f.CA)
	}
	return nil
}

func (f TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return cert, nil, fmt.Errorf("tls key pair %s, %s: %w", f.Cert, f.Key, err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return cert, nil, fmt.Errorf("tls ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return cert, nil, fmt.Errorf("tls ca %s: no PEM certificate in it", f.CA)
	}
	return cert, pool, nil
}

// ServerConfig is the coordinator's TLS: it presents its certificate and
// requires every peer to present one signed by the CA.
func ServerConfig(f TLSFiles) (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// ClientConfig is a worker's or the CLI's TLS: it verifies the coordinator
// against the CA (so a worker runs only what an authenticated coordinator
// sends) and presents its own certificate.
func ClientConfig(f TLSFiles, serverName string) (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ServerName:   serverName,
		MinVersion:   tls.VersionTLS13,
	}, nil
}
