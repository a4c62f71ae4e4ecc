package transport

import (
	"context"
	"crypto/tls"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/writepath/writepath/auth"
)

// Client is how a worker or the CLI dials a coordinator.
type Client struct {
	// TLS, when set, is mutual TLS (auth.ClientConfig); nil is plaintext.
	TLS *tls.Config
	// Token, when not empty, goes with every call.
	Token string
}

// DialOptions are the options for grpc.NewClient: credentials, message
// limits, keepalive, a bounded connection attempt and a deadline for unary
// calls that carry none.
func (c Client) DialOptions() []grpc.DialOption { return c.dialOptions(CallTimeout) }

func (c Client) dialOptions(callTimeout time.Duration) []grpc.DialOption {
	opts := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(ClientRecvLimit), grpc.MaxCallSendMsgSize(ClientSendLimit)),
		grpc.WithKeepaliveParams(clientKeepalive),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: DialTimeout}),
		grpc.WithChainUnaryInterceptor(withCallTimeout(callTimeout)),
	}
	if c.TLS == nil {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithChainUnaryInterceptor(plaintextHintUnary), grpc.WithChainStreamInterceptor(plaintextHintStream))
	}
	return append(opts, auth.DialOptions(c.TLS, c.Token)...)
}

// withCallTimeout gives a unary call without a deadline d, so a
// coordinator that accepts and never answers cannot hang a command.
func withCallTimeout(d time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
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
