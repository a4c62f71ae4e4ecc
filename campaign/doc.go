// Package campaign turns a campaign spec — a matrix of server settings and
// workload options, run on named host groups for a number of rounds — into
// an ordered list of ordinary runs, and aggregates their stored intervals
// into the table the write-ups publish: one row per cell, one column per
// group, the median over rounds of the throughput and p99 inside a time
// window, with the rounds' spread and the delta against a baseline cell.
//
// The package knows no workload kind: a cell becomes command-line arguments
// in the kind's own syntax (workload options as given, server settings as
// --set k=v), which the registry's FromArgs turns into a spec.
package campaign
