// Package hist is writepath's one latency histogram: an HdrHistogram of
// nanosecond values with one fixed geometry, so that any two histograms merge
// exactly. Percentiles are always read from a (merged) histogram, never
// averaged across hosts or intervals.
//
// Only this package imports hdrhistogram-go; everything else sees Histogram.
package hist
