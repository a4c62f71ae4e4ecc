package runview

import (
	"slices"

	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// traceSeries draws the kernel-evidence series (package series) on the
// interval grid, from the merged intervals' stats: per device and op the
// D2C p99 and (where requests queued) the Q2D p99 in ms, redo reads and
// writes per second; per process of interest the fsync/fdatasync p99 in ms
// and the write-size p50 in bytes.
func traceSeries(ivs []*writepathv1.MergedInterval, t []float64) (block, sys []report.Series) {
	idx := map[string]int{}
	var all []report.Series
	put := func(name, unit string, k int, v float64) {
		i, ok := idx[name]
		if !ok {
			i = len(all)
			idx[name] = i
			all = append(all, report.Series{Name: name, Unit: unit, T: t, Values: make([]float64, len(t))})
		}
		all[i].Values[k] = v
	}
	for k, mi := range ivs {
		for _, st := range mi.GetStats() {
			s, ok := series.Parse(st.GetOp())
			if !ok {
				continue
			}
			switch {
			case s.Prefix == "block" && s.Metric != series.Bytes:
				put(s.Device+" "+s.Op+" "+s.Metric+" p99", "ms", k, ms(st.GetP99()))
			case s.Prefix == "redo" && mi.GetSeconds() > 0:
				put("redo "+s.Op+"s", "/s", k, float64(st.GetCount())/mi.GetSeconds())
			case s.Prefix == "sys" && s.Bytes():
				put("write size p50", "bytes", k, float64(st.GetP50()))
			case s.Prefix == "sys":
				put(s.Op+" p99", "ms", k, ms(st.GetP99()))
			}
		}
	}
	for _, s := range all {
		if isSys(s.Name) {
			sys = append(sys, s)
		} else {
			block = append(block, s)
		}
	}
	return block, sys
}

// isSys tells the syscall panel's lines from the block ones.
func isSys(name string) bool {
	return slices.Contains([]string{"write size p50", "fsync p99", "fdatasync p99"}, name)
}

// evidenceRows are the whole-run figures of every kernel series.
func evidenceRows(s *client.Summary) []report.EvidenceRow {
	var rows []report.EvidenceRow
	for _, p := range s.Phases {
		for _, e := range p.Merged.Series {
			rows = append(rows, report.EvidenceRow{Name: e.Series, Unit: e.Unit, Count: e.Count,
				P50: e.P50, P99: e.P99, P999: e.P999, Max: e.Max})
		}
	}
	return rows
}
