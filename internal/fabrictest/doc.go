// Package fabrictest starts a whole fabric in-process for tests: a
// coordinator on a real gRPC server (loopback TCP or bufconn), a bbolt
// store in a temporary directory, and N workers, all with timings short
// enough for fast lifecycle tests. Package testkind provides a synthetic
// kind with deterministic latencies.
package fabrictest
