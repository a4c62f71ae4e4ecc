// Package local runs a whole fabric in one process: a coordinator serving
// real gRPC on a loopback listener and N workers dialling it. It is the
// CLI's embedded default (no --coordinator) and the base of
// internal/fabrictest; it is the same code path as a cluster, only the
// processes are fewer.
package local
