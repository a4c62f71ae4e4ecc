// Package local runs a whole fabric in one process: a coordinator serving
// real gRPC on a private unix socket (transport.Private: a 0700 directory,
// this process only, a per-process token, so no other local process can
// submit a job) and N workers dialling it. It is the
// CLI's embedded default (no --coordinator) and the base of
// internal/fabrictest; it is the same code path as a cluster, only the
// processes are fewer.
package local
