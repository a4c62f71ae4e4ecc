package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/writepath/writepath/auth"
	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Message size limits. The coordinator's receive limit bounds what a worker
// can make it buffer before any check runs (an interval carries at most 64
// ops of ~2 KB histograms; 16 MiB leaves room for hist.MaxEncodedSize per
// op). Clients read whole runs (GetRun with every interval), so theirs is
// larger; they talk only to a coordinator they authenticated.
const (
	serverRecvLimit = 16 << 20
	serverSendLimit = 256 << 20
	clientRecvLimit = 256 << 20
	clientSendLimit = 16 << 20
)

// connFlags are how a command reaches a coordinator: its address and the
// credentials. Every command that dials (worker, run, runs, workers,
// cancel, campaign ...) embeds one, so they all take the same flags.
type connFlags struct {
	coordinator string
	tls         auth.TLSFiles
	serverName  string
	tokenFile   string
}

// AddFlags registers --coordinator and the credential flags on cmd.
func (o *connFlags) AddFlags(cmd *cobra.Command, usage string) {
	o.addFlagSet(cmd.Flags(), usage)
}

// addFlagSet is AddFlags for a bare flag set (run parses its own).
func (o *connFlags) addFlagSet(f *pflag.FlagSet, usage string) {
	f.StringVar(&o.coordinator, "coordinator", "", usage)
	o.addCredentialFlags(f)
}

// addCredentialFlags registers --tls-* and --token-file alone.
func (o *connFlags) addCredentialFlags(f *pflag.FlagSet) {
	f.StringVar(&o.tls.Cert, "tls-cert", "", "certificate presented to the coordinator (mutual TLS; with --tls-key and --tls-ca)")
	f.StringVar(&o.tls.Key, "tls-key", "", "private key of --tls-cert")
	f.StringVar(&o.tls.CA, "tls-ca", "", "CA that signed the coordinator's certificate")
	f.StringVar(&o.serverName, "tls-server-name", "", "name expected in the coordinator's certificate (default: the host of --coordinator)")
	f.StringVar(&o.tokenFile, "token-file", "", "file whose first line is the fabric's shared bearer token")
}

// dialOptions are the options for dialling a coordinator: mutual TLS when
// --tls-* are given (the coordinator is verified against --tls-ca, so a
// worker runs only what an authenticated coordinator sends), else
// plaintext; the token with every call when --token-file is given.
func (o *connFlags) dialOptions() ([]grpc.DialOption, error) {
	if err := o.tls.Validate(); err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(clientRecvLimit), grpc.MaxCallSendMsgSize(clientSendLimit))}
	token, err := readTokenFlag(o.tokenFile)
	if err != nil {
		return nil, err
	}
	if !o.tls.Enabled() {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithChainUnaryInterceptor(plaintextHintUnary), grpc.WithChainStreamInterceptor(plaintextHintStream))
		return append(opts, auth.DialOptions(nil, token)...), nil
	}
	conf, err := auth.ClientConfig(o.tls, o.tlsServerName())
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key/--tls-ca: %w", err)
	}
	return append(opts, auth.DialOptions(conf, token)...), nil
}

// dial connects to --coordinator with dialOptions. missing is the error
// when no coordinator was given (each command says what to do instead).
func (o *connFlags) dial(missing string) (*client.Client, error) {
	if o.coordinator == "" {
		return nil, errors.New(missing)
	}
	opts, err := o.dialOptions()
	if err != nil {
		return nil, err
	}
	return client.Dial(o.coordinator, opts...)
}

// tlsServerName is --tls-server-name, or the host part of --coordinator.
func (o *connFlags) tlsServerName() string {
	if o.serverName != "" {
		return o.serverName
	}
	host, _, err := net.SplitHostPort(o.coordinator)
	if err != nil {
		return o.coordinator
	}
	return host
}

func readTokenFlag(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	tok, err := auth.ReadToken(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	return tok, nil
}

// serveFlags are the coordinator's credential flags.
type serveFlags struct {
	tls       auth.TLSFiles
	tokenFile string
	insecure  bool
}

// AddFlags registers --tls-*, --token-file and --insecure.
func (o *serveFlags) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.tls.Cert, "tls-cert", "", "coordinator certificate (mutual TLS; with --tls-key and --tls-ca)")
	f.StringVar(&o.tls.Key, "tls-key", "", "private key of --tls-cert")
	f.StringVar(&o.tls.CA, "tls-ca", "", "CA whose signature workers' and clients' certificates must carry")
	f.StringVar(&o.tokenFile, "token-file", "", "file whose first line is a bearer token every call must carry")
	f.BoolVar(&o.insecure, "insecure", false, "serve plaintext to any address (default: plaintext only from loopback)")
}

// Validate reports flag combinations that cannot work.
func (o *serveFlags) Validate() error {
	if err := o.tls.Validate(); err != nil {
		return err
	}
	if o.insecure && o.tls.Enabled() {
		return fmt.Errorf("--insecure with --tls-*: TLS is never plaintext; drop --insecure")
	}
	return nil
}

// fabricRoles says which certificate role may call which service: workers
// connect, clients (the CLI) control. A coordinator certificate may do
// neither, so a stolen coordinator key cannot submit jobs.
var fabricRoles = map[string][]auth.Role{
	writepathv1.WorkerService_ServiceDesc.ServiceName:  {auth.RoleWorker},
	writepathv1.ControlService_ServiceDesc.ServiceName: {auth.RoleClient},
}

// security is what the coordinator serves with: its gRPC options, the
// listener wrapper and a one-line description of the mode for the log.
type security struct {
	opts []grpc.ServerOption
	mode string
	wrap func(net.Listener, *slog.Logger) net.Listener
}

// serverSecurity builds the coordinator's security from the flags.
// Plaintext without --insecure is served to loopback peers only, and each
// refused peer is logged.
func (o *serveFlags) serverSecurity() (security, error) {
	token, err := readTokenFlag(o.tokenFile)
	if err != nil {
		return security{}, err
	}
	p := auth.Policy{Token: token, Roles: fabricRoles}
	s := security{mode: "plaintext, loopback peers only (start with --tls-* for other hosts)",
		wrap: loopbackOnly}
	switch {
	case o.tls.Enabled():
		if p.TLS, err = auth.ServerConfig(o.tls); err != nil {
			return security{}, fmt.Errorf("--tls-cert/--tls-key/--tls-ca: %w", err)
		}
		s.mode, s.wrap = "mutual TLS (worker and client certificate roles)", nil
	case o.insecure:
		s.mode, s.wrap = "INSECURE: plaintext from any address (--insecure)", nil
	}
	if token != "" {
		s.mode += ", bearer token required"
	}
	s.opts = append(p.ServerOptions(), grpc.MaxRecvMsgSize(serverRecvLimit), grpc.MaxSendMsgSize(serverSendLimit))
	return s, nil
}

func loopbackOnly(l net.Listener, log *slog.Logger) net.Listener {
	return auth.LoopbackOnly(l, func(remote net.Addr) {
		log.Warn("refused plaintext connection from a non-loopback address; serve with --tls-* (or --insecure)", "peer", remote.String())
	})
}

// listen opens addr and wraps it as the security mode requires.
func (s security) listen(addr string, log *slog.Logger) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	if s.wrap != nil {
		lis = s.wrap(lis, log)
	}
	return lis, nil
}

// plaintextHint says what to do when a plaintext connection is cut at once:
// the coordinator serves TLS, or plaintext to loopback only. gRPC alone
// says "error reading server preface: EOF".
func plaintextHint(err error) error {
	st, ok := status.FromError(err)
	cut := strings.Contains(st.Message(), "EOF") || strings.Contains(st.Message(), "reset by peer")
	if !ok || st.Code() != codes.Unavailable || !cut {
		return err
	}
	return status.Errorf(codes.Unavailable, "%s (plaintext refused? the coordinator may require --tls-cert/--tls-key/--tls-ca, "+
		"or serve plaintext to loopback only)", st.Message())
}

func plaintextHintUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return plaintextHint(invoker(ctx, method, req, reply, cc, opts...))
}

func plaintextHintStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, plaintextHint(err)
	}
	return hintStream{cs}, nil
}

// hintStream adds the hint to a stream's receive errors too.
type hintStream struct{ grpc.ClientStream }

func (h hintStream) RecvMsg(m any) error {
	err := h.ClientStream.RecvMsg(m)
	if err == io.EOF {
		return err
	}
	return plaintextHint(err)
}
