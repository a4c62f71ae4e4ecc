package fio

import (
	"fmt"
	"strings"

	"github.com/writepath/writepath/workload"
)

// ProgressLine renders one Recorder interval as a short live status line,
// like fio's ETA line: per operation the rate and the p99 latency.
func ProgressLine(s workload.Snapshot) string {
	secs := s.End.Sub(s.Start).Seconds()
	if secs <= 0 {
		secs = 1
	}
	parts := []string{fmt.Sprintf("[%s]", s.End.Format("15:04:05"))}
	for _, op := range s.OpNames() {
		h := s.Ops[op]
		parts = append(parts, fmt.Sprintf("%s: %s IOPS p99=%s", op,
			num2str(uint64(float64(h.Count())/secs), 4, false, ""), fmtNs(h.Percentile(99))))
	}
	return strings.Join(parts, " ")
}

// fmtNs renders nanoseconds in the largest fitting unit.
func fmtNs(ns int64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1fus", float64(ns)/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}
