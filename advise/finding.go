package advise

import (
	"fmt"
	"math"
)

// Severity ranks a finding.
type Severity string

const (
	// Warn is a setting that costs throughput or latency on this machine.
	Warn Severity = "warn"
	// Info is a check that needs more data, or a setting worth a look.
	Info Severity = "info"
)

// Evidence is one value a finding rests on, as read.
type Evidence struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Finding is one rule's verdict.
type Finding struct {
	Rule     string     `json:"rule"`
	Severity Severity   `json:"severity"`
	Problem  string     `json:"problem"`
	Evidence []Evidence `json:"evidence"`
	// Suggest is the setting (or action) to try, e.g.
	// "innodb_flush_neighbors=0".
	Suggest string `json:"suggest"`
	// Why is the reasoning, with the field's published numbers.
	Why string `json:"why"`
	// Campaign, when the suggestion can be measured, is a campaign file
	// that runs it against what is in force now.
	Campaign *Campaign `json:"campaign,omitempty"`
}

// ev builds an Evidence from any value.
func ev(name string, value any) Evidence { return Evidence{Name: name, Value: fmt.Sprint(value)} }

// mib formats bytes as "96 MiB" / "1.5 GiB".
func mib(b float64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.4g GiB", b/(1<<30))
	}
	return fmt.Sprintf("%.4g MiB", b/(1<<20))
}

// optionSize formats bytes for an option file, rounded up to whole MiB or
// GiB ("512M", "2G").
func optionSize(b float64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%dG", int64(math.Ceil(b/(1<<30))))
	}
	return fmt.Sprintf("%dM", int64(math.Ceil(b/(1<<20))))
}
