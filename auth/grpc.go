package auth

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// Policy decides which callers may use which services of the coordinator.
type Policy struct {
	// TLS, when set, makes the server speak mutual TLS; callers' roles then
	// come from their certificates.
	TLS *tls.Config
	// Token, when not empty, must arrive as "authorization: Bearer <token>"
	// on every call.
	Token string
	// Roles maps a full service name ("writepath.v1.ControlService") to the
	// certificate roles allowed to call it. Enforced only under TLS.
	Roles map[string][]Role
	// StreamsPerCertificate, when positive, bounds the streams open at once
	// under one worker certificate (a worker needs one), so a stolen
	// worker key cannot make the server hold many streams' messages.
	StreamsPerCertificate int
	// Refused, when set, hears of every call the tap refuses (its context,
	// which carries the peer): gRPC keeps what it made for such a call
	// until the connection ends (grpc-go v1.85 never cancels a stream its
	// tap refused), so a server bounds refusals per connection.
	Refused func(ctx context.Context)
}

// ServerOptions returns the transport credentials and the admission of
// every call. Who may call what is checked in gRPC's tap, when a stream's
// headers arrive and before any of its messages is read: a caller without
// the token or the role cannot make the server buffer a single request.
// The per-certificate stream bound is checked just after, in interceptors,
// before the handler reads a message: the callers it refuses hold a
// certificate of the right role, and a refusal there is cleaned up with its
// stream instead of staying until the connection closes (a flood with a
// stolen worker certificate made 400,000 such refusals in 12 s and grew
// the coordinator's heap by 100 MiB).
func (p Policy) ServerOptions() []grpc.ServerOption {
	var opts []grpc.ServerOption
	if p.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(p.TLS)))
	}
	opts = append(opts, grpc.InTapHandle(func(ctx context.Context, info *tap.Info) (context.Context, error) {
		err := p.admit(ctx, info.FullMethodName)
		if err != nil && p.Refused != nil {
			p.Refused(ctx)
		}
		return ctx, err
	}))
	if p.StreamsPerCertificate <= 0 {
		return opts
	}
	streams := &certStreams{max: p.StreamsPerCertificate, open: map[[32]byte]int{}}
	return append(opts,
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if err := streams.take(ss.Context()); err != nil {
				return err
			}
			return handler(srv, ss)
		}),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if err := streams.take(ctx); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}))
}

// admit checks one call. It is the only place that turns an auth failure
// into a gRPC status.
func (p Policy) admit(ctx context.Context, method string) error {
	if p.Token != "" {
		if err := checkToken(ctx, p.Token); err != nil {
			return status.Error(codes.Unauthenticated, err.Error())
		}
	}
	if p.TLS == nil {
		return nil
	}
	role, err := peerRole(ctx)
	if err != nil {
		return status.Error(codes.Unauthenticated, err.Error())
	}
	service := strings.TrimPrefix(method, "/")
	if i := strings.LastIndex(service, "/"); i >= 0 {
		service = service[:i]
	}
	allowed, ruled := p.Roles[service]
	if !ruled {
		return nil
	}
	for _, r := range allowed {
		if r == role {
			return nil
		}
	}
	return status.Errorf(codes.PermissionDenied, "role %q may not call %s", role, service)
}

func checkToken(ctx context.Context, want string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		got, ok := strings.CutPrefix(v, "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 {
			return nil
		}
	}
	return fmt.Errorf("missing or wrong bearer token")
}

func peerRole(ctx context.Context) (Role, error) {
	c, ok := PeerCertificate(ctx)
	if !ok {
		return "", fmt.Errorf("no verified client certificate")
	}
	return RoleOf(c)
}

// DialOptions returns what a worker or the CLI needs to reach a coordinator
// protected by a Policy: TLS (nil for plaintext) and the token, if any.
func DialOptions(tlsConf *tls.Config, token string) []grpc.DialOption {
	var opts []grpc.DialOption
	if tlsConf != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tlsConf)))
	}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: token, secure: tlsConf != nil}))
	}
	return opts
}

// bearer sends the shared token with every call.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false so the token also guards loopback
// plaintext; across hosts the plaintext guard refuses such connections.
func (b bearer) RequireTransportSecurity() bool { return false }

// ReadToken reads a --token-file: the first line, trimmed. An empty token is
// an error, since it would authenticate anyone.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}
