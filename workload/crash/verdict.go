package crash

import (
	"strings"
)

// Verdict is what the restart after the crash said about the data: the
// server's own start-up lines and CHECK TABLE.
type Verdict struct {
	// RefusedStart: the server did not come up after the crash.
	RefusedStart bool `json:"refused_start"`
	// CheckFailed: CHECK TABLE found a damaged table.
	CheckFailed bool `json:"check_failed"`
	// Corrupt are the restart's error-log lines that speak of corruption.
	Corrupt []string `json:"corrupt,omitempty"`
	// Doublewrite are its lines about the doublewrite buffer (pages
	// restored from it).
	Doublewrite []string `json:"doublewrite,omitempty"`
	// Errors are its [ERROR] lines.
	Errors []string `json:"errors,omitempty"`
	// Lines counts the restart's lines of each list before the bound.
	CorruptLines     int `json:"corrupt_lines"`
	DoublewriteLines int `json:"doublewrite_lines"`
	ErrorLines       int `json:"error_lines"`
}

// Damaged reports whether the crash damaged the data as the server or
// CHECK TABLE see it.
func (v Verdict) Damaged() bool {
	return v.RefusedStart || v.CheckFailed || len(v.Corrupt) > 0
}

// maxVerdictLines bounds each list: a damaged tablespace can log
// thousands of lines.
const maxVerdictLines = 20

// scanVerdict sorts the restart's error-log lines.
func scanVerdict(v *Verdict, lines []string) {
	for _, l := range lines {
		low := strings.ToLower(l)
		if strings.Contains(low, "corrupt") {
			v.Corrupt = appendBounded(v.Corrupt, l)
			v.CorruptLines++
		}
		if strings.Contains(low, "doublewrite") {
			v.Doublewrite = appendBounded(v.Doublewrite, l)
			v.DoublewriteLines++
		}
		if strings.Contains(l, "[ERROR]") {
			v.Errors = appendBounded(v.Errors, l)
			v.ErrorLines++
		}
	}
}

func appendBounded(s []string, l string) []string {
	if len(s) >= maxVerdictLines {
		return s
	}
	return append(s, l)
}
