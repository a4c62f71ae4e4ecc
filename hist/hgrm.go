package hist

import (
	"fmt"
	"io"
)

// WriteHgrm writes h in HdrHistogram's percentile distribution text format
// (the ".hgrm" files wrk2 and HdrHistogram's plotter read), with values
// scaled by scale (1e6 prints milliseconds).
func (h *Histogram) WriteHgrm(w io.Writer, scale float64) error {
	if _, err := h.h.PercentilesPrint(w, 5, scale); err != nil {
		return fmt.Errorf("write hgrm: %w", err)
	}
	return nil
}
