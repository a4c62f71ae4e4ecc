// Package client is the CLI's side of the fabric: it submits runs to a
// coordinator's ControlService, follows them (cancelling on the way out if
// the caller gives up), reads stored runs through a coordinator or straight
// from a store file, and turns merged intervals into the lines, summaries
// and .hgrm files people read. It never decodes a workload spec.
package client
