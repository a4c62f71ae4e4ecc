package hist

import (
	"fmt"
	"io"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// WriteHgrm writes h in HdrHistogram's percentile distribution text format
// (the ".hgrm" files wrk2 and HdrHistogram's plotter read), with values
// scaled by scale (1e6 prints milliseconds).
func (h *Histogram) WriteHgrm(w io.Writer, scale float64) error {
	// Off the hot path: hdrhistogram-go's printer, on a copy of the counts.
	hh := hdr.Import(&hdr.Snapshot{LowestTrackableValue: Lowest, HighestTrackableValue: Highest,
		SignificantFigures: SigFigs, Counts: h.counts})
	if _, err := hh.PercentilesPrint(w, 5, scale); err != nil {
		return fmt.Errorf("write hgrm: %w", err)
	}
	return nil
}
