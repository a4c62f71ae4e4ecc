// Package transport is the fabric's one gRPC configuration: message and
// stream limits, keepalive, listeners and credentials. The real
// coordinator (`writepath coordinator`), the embedded fabric (package
// local) and every dialler (workers, the CLI) take their options from
// here, so a limit is set once and holds on every path.
//
// Three ways to serve:
//   - Server with auth.Policy TLS: mutual TLS with certificate roles;
//   - Server without TLS: plaintext to loopback peers only (refused peers
//     logged, rate-limited), or to anyone with Insecure;
//   - Private: the embedded fabric's unix socket in a fresh 0700
//     directory, admitting only this process (SO_PEERCRED) and only calls
//     carrying a random per-process token.
package transport
