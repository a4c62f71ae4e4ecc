// Package worker is the agent that runs workload phases for a coordinator.
//
// A Worker dials the coordinator, holds one WorkerService.Connect stream,
// answers pings (the coordinator estimates this host's clock offset from
// them), and reconnects with backoff when the stream breaks. For each
// assigned phase it looks the kind up by the spec's type URL in the
// workload registry, builds the Workload from the spec bytes, waits for the
// common start, runs it, and at every boundary at+(k+1)·d ticks the
// Recorder and streams interval k. It knows no kind by name and never looks
// inside a histogram or a summary.
package worker
