// Package coordinator schedules runs of workload specs on workers and merges
// what they report.
//
// Workers hold one WorkerService.Connect stream each (session.go). A run
// (run.go) goes submitted -> placing -> running, and per phase assigned ->
// ready -> started -> done (phase.go), ending finished, partial (a worker
// was lost; survivors' data kept), failed, cancelled, or interrupted (the
// coordinator restarted while it was in flight). Every state change and
// every merged interval is written to the store when it happens.
//
// Timing: the coordinator pings each worker every heartbeat interval and
// estimates that worker's clock offset from the last round trips (clock.go:
// the middle of the range all of them allow, else the shortest's). A phase starts when every placed worker is ready: the
// coordinator picks at = now + margin in its own clock and tells each worker
// at + offset in the worker's clock, so interval k covers [at+k·d, at+(k+1)·d)
// on every worker and merging interval k merges one slice of time.
//
// Merging (merge.go) is exact: each worker's histograms are decoded after
// size and geometry checks and merged into one histogram per operation;
// counters and gauges are summed. Interval k is published once every
// expected worker reported it or its bounded wait ran out, whichever is
// first; it goes to the watchers then, and to the store a commit later
// (watchers joining in between get it from memory); a late snapshot is
// merged into the stored interval afterwards.
//
// The package knows no workload kind: it plans from the kinds and phases the
// workers advertise, and forwards specs without decoding them.
package coordinator
