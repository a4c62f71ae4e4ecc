// Package store keeps the coordinator's results in one bbolt file: runs,
// merged intervals, each worker's own snapshots, and the last known workers.
// It is the only package that imports bbolt.
//
// Values are protobuf messages; keys are big-endian so that a cursor walks
// them in numeric order. Every write is its own committed transaction, so a
// coordinator killed at any point loses nothing already written, and no
// bbolt slice ever leaves the transaction that produced it.
package store
