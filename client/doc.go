// Package client is the CLI's side of the fabric: it submits runs to a
// coordinator's ControlService, follows them (cancelling on the way out if
// the caller gives up), reads stored runs through a coordinator's ReadRun
// stream or straight from a store file (both results.Source), and turns
// reduced runs (results.Run) into the lines, summaries, comparisons, .hgrm
// files and campaign tables people read. It never decodes a workload spec
// and imports nothing of the coordinator.
package client
