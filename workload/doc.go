// Package workload is the seam between the fabric and the kinds of load it
// runs (fio-equivalent jobs, OLTP write-only, crash rounds).
//
// A kind registers a Meta at init time: its spec type URL, its phases and
// their placement, and a constructor that decodes and validates a spec. The
// worker looks a kind up by the spec's type URL and runs one phase with a
// Recorder; the coordinator plans runs from the phases the worker advertises.
// Neither imports a kind. Package workload/all links every kind.
package workload
