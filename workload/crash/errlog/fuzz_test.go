package errlog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParser feeds arbitrary text through the live parser and the scanner:
// nothing may panic, every ready event must carry a port, and the redo
// span must never underflow. Seeds: testdata/fuzz/FuzzParser and every
// recorded log.
func FuzzParser(f *testing.F) {
	logs, _ := filepath.Glob("testdata/logs/*.log")
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Parser
		s := Scanner{Port: 3306}
		at := time.Unix(0, 0)
		for i, line := range bytes.Split(data, []byte("\n")) {
			for _, ev := range p.Line(string(line), at.Add(time.Duration(i))) {
				s.Add(ev)
			}
		}
		for _, ev := range p.Flush() {
			s.Add(ev)
		}
		r := s.Recovery()
		if r.Ready != nil && r.Ready.Port != 3306 {
			t.Errorf("ready on port %d; want only 3306", r.Ready.Port)
		}
		if r.RedoSpan > 0 && r.EndLSN < r.CheckpointLSN {
			t.Errorf("span %d with end %d < checkpoint %d", r.RedoSpan, r.EndLSN, r.CheckpointLSN)
		}
	})
}
