package auth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// PeerCertificate returns the verified leaf certificate of the call in
// ctx; false when the call came without one (plaintext, token).
func PeerCertificate(ctx context.Context) (*x509.Certificate, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return nil, false
	}
	return info.State.VerifiedChains[0][0], true
}

// NamesOf are the names a certificate proves: its common name and its DNS
// subject alternative names. A worker certificate's names are the worker
// names its holder may register under.
func NamesOf(c *x509.Certificate) []string {
	names := make([]string, 0, 1+len(c.DNSNames))
	if c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	return append(names, c.DNSNames...)
}

// WorkerNames returns the names the worker certificate of the call in ctx
// binds its holder to; bound is false when the call carries no verified
// certificate (plaintext or token only), which binds no name.
func WorkerNames(ctx context.Context) (names []string, bound bool) {
	c, ok := PeerCertificate(ctx)
	if !ok {
		return nil, false
	}
	return NamesOf(c), true
}

// certStreams counts the streams open under each worker certificate.
type certStreams struct {
	max int
	mu  sync.Mutex
	// open counts streams by the SHA-256 of the certificate (one key may
	// be reissued; a certificate is one identity).
	open map[[32]byte]int
}

// take admits one more stream of the worker certificate in ctx, or refuses
// it past the limit; the stream's slot is given back when ctx (the
// stream's own context) ends. Other roles and plaintext are not counted.
func (cs *certStreams) take(ctx context.Context) error {
	if cs == nil {
		return nil
	}
	c, ok := PeerCertificate(ctx)
	if !ok {
		return nil
	}
	if r, err := RoleOf(c); err != nil || r != RoleWorker {
		return nil
	}
	key := sha256.Sum256(c.Raw)
	cs.mu.Lock()
	if cs.open[key] >= cs.max {
		cs.mu.Unlock()
		return status.Errorf(codes.ResourceExhausted, "worker certificate %q has %d streams open, the limit per worker certificate",
			c.Subject.CommonName, cs.max)
	}
	cs.open[key]++
	cs.mu.Unlock()
	context.AfterFunc(ctx, func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		if cs.open[key]--; cs.open[key] <= 0 {
			delete(cs.open, key)
		}
	})
	return nil
}
