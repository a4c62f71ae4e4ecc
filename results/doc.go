// Package results owns reading a stored run back. Scan turns a store into
// the items of a ReadRun stream (the record, merged intervals with their
// per-worker telemetry in bounded chunks, per-worker totals or snapshots);
// a coordinator serves the same items over gRPC, so a reader (Source) is a
// store file or a coordinator alike. Read reduces those items, in one pass
// and with the sparse decoder, into what every consumer shows: per phase
// the merged and per-worker totals of each operation (histograms merged
// exactly), counters, the telemetry windows per worker and device or
// gauge, and the grid of merged intervals. Summaries, `runs show`/`hgrm`/
// `compare`, the HTML report and campaign tables all read runs through it;
// none decodes a histogram on its own.
package results
