package transport

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Limits of every fabric connection. Each has a number here and an error
// or status naming it where it is hit.
const (
	// ServerRecvLimit bounds one message a coordinator receives: what a
	// peer can make it buffer before any check runs. An interval carries
	// at most 64 ops of at most hist.MaxEncodedSize (256 KiB) each.
	ServerRecvLimit = 16 << 20
	// ServerSendLimit bounds one message a coordinator sends (GetRun with
	// every interval of a run, until reads stream).
	ServerSendLimit = 256 << 20
	// ClientRecvLimit and ClientSendLimit are the diallers' side: they
	// read whole runs and send at most what the coordinator accepts.
	ClientRecvLimit = ServerSendLimit
	ClientSendLimit = ServerRecvLimit
	// MaxConcurrentStreams bounds the streams open at once on one
	// connection. A worker needs one (the embedded fabric's workers dial
	// their own connections too), the CLI a few; a simulator multiplexes
	// ten workers per connection. Each open stream costs the coordinator
	// a handler waiting for its Hello: 200 stolen-certificate connections
	// hold 6,400 of them (the coordinator peaked at 97-103 MiB in
	// deploy/netns/faults.sh; 108 MiB at RFC 9113's floor of 100).
	MaxConcurrentStreams = 32
	// MaxHeaderListSize bounds a call's metadata (gRPC's default is
	// 16 MiB); a bearer token and gRPC's own headers need a few hundred
	// bytes.
	MaxHeaderListSize = 64 << 10
	// HandshakeTimeout bounds a new connection's TLS and HTTP/2 handshake,
	// so a peer that connects and says nothing is dropped.
	HandshakeTimeout = 10 * time.Second
	// DefaultMaxConnections bounds the connections a coordinator serves at
	// once (accepting waits while at the limit): a fleet of 1,000 workers
	// and its clients fit, a flood of idle connections does not grow the
	// coordinator past its memory budget.
	DefaultMaxConnections = 2048
	// MaxRefusedCalls bounds the calls refused (wrong role or token) on one
	// connection before the coordinator closes it: gRPC frees what it made
	// for a refused call only when the connection ends, a few hundred bytes
	// each, so 2,048 connections hold at most ~70 MiB of them. A worker or
	// CLI refused that often is misconfigured and redials.
	MaxRefusedCalls = 128
	// DialTimeout bounds establishing a connection to a coordinator.
	DialTimeout = 10 * time.Second
	// CallTimeout bounds a unary call that carries no deadline of its own
	// (the CLI's list, show, submit, cancel); streams (a worker's session,
	// watching a run) are long by design and not bounded.
	CallTimeout = time.Minute
)

// Keepalive: the server probes idle transports so one behind a cut link is
// torn down instead of lingering (the heartbeat timeout, not this, decides
// when a worker is lost); diallers probe too, at no shorter an interval
// than the server permits.
var (
	serverKeepalive = keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}
	serverEnforce   = keepalive.EnforcementPolicy{MinTime: 20 * time.Second, PermitWithoutStream: true}
	clientKeepalive = keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}
)

// baseServerOptions are the limits and keepalive every fabric server has.
func baseServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(ServerRecvLimit),
		grpc.MaxSendMsgSize(ServerSendLimit),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.MaxHeaderListSize(MaxHeaderListSize),
		grpc.ConnectionTimeout(HandshakeTimeout),
		grpc.KeepaliveParams(serverKeepalive),
		grpc.KeepaliveEnforcementPolicy(serverEnforce),
		// Stop waits for handlers, so nothing a handler writes (a worker's
		// last state) races the store's close.
		grpc.WaitForHandlers(true),
	}
}
