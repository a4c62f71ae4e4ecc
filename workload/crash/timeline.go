package crash

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/writepath/writepath/workload"
)

// Timelines reads a crash run's summary (a Result) into each round's
// restart for a report (workload.Meta.Timeline): kill, process start (the
// spawn when no log line came), recovery start, redo applied, ready and
// first commit, as milliseconds after the kill; points never reached are
// left out, and so are rounds that never killed.
func Timelines(summary []byte) ([]workload.TimelineRound, error) {
	var res Result
	if err := json.Unmarshal(summary, &res); err != nil {
		return nil, fmt.Errorf("crash summary: %w", err)
	}
	var out []workload.TimelineRound
	for _, r := range res.Rounds {
		tl := r.Timeline
		if tl.Kill.IsZero() {
			continue
		}
		start := tl.ProcessStart
		if start.IsZero() {
			start = tl.Spawn
		}
		tr := workload.TimelineRound{Round: r.Round}
		for _, p := range []struct {
			name string
			at   time.Time
		}{{"kill", tl.Kill}, {"process start", start}, {"recovery start", tl.RecoveryStart},
			{"redo applied", tl.RedoApplied}, {"ready", tl.Ready}, {"first commit", tl.FirstCommit}} {
			if !p.at.IsZero() {
				tr.Points = append(tr.Points, workload.TimelinePoint{Name: p.name, Ms: float64(p.at.Sub(tl.Kill).Microseconds()) / 1000})
			}
		}
		out = append(out, tr)
	}
	return out, nil
}

// SummaryText is a crash run's summary (a Result) as `writepath crash`
// prints it (workload.Meta.Text).
func SummaryText(summary []byte) (string, error) {
	var res Result
	if err := json.Unmarshal(summary, &res); err != nil {
		return "", fmt.Errorf("crash summary: %w", err)
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}
