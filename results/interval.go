package results

import (
	"fmt"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// IntervalHistogram merges the histograms of the operations of one merged
// interval that want accepts (a campaign's primary operations).
func IntervalHistogram(mi *writepathv1.MergedInterval, want func(op string) bool) (*hist.Histogram, error) {
	var dec hist.Decoder
	acc := hist.NewAccumulator()
	for _, o := range mi.GetOps() {
		if !want(o.GetOp()) {
			continue
		}
		s, err := dec.DecodeSparse(o.GetHdr())
		if err != nil {
			return nil, fmt.Errorf("op %s: %w", o.GetOp(), err)
		}
		if err := acc.Add(s); err != nil {
			return nil, fmt.Errorf("op %s: %w", o.GetOp(), err)
		}
	}
	return acc.Histogram(), nil
}
