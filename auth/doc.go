// Package auth secures the fabric's gRPC traffic: mutual TLS with roles
// carried in certificates (coordinator, worker, client), a shared bearer
// token as the lighter alternative, and a listener that refuses plaintext
// from anywhere but loopback. A worker starts servers and drops caches as
// root: a fabric that takes jobs from anyone on the network would be a
// remote root shell.
//
// The coordinator and worker packages never import auth; the command wires
// its grpc.ServerOption and grpc.DialOption values into them.
package auth
