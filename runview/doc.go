// Package runview turns a stored run (results.Run, read with
// results.PerWorker) into what package report draws: per-operation
// series, the workers' shares, and the telemetry series (iostat -x per
// worker and device, InnoDB gauges). It is the one converter from stored
// runs to report.Run; campaign reports reuse it per run.
package runview
