package main

import (
	"encoding/json"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload/crash"
)

// crashTimeline is a crash run's restart per round for the report, from
// the workers' summaries of its measured phase: kill, process start (the
// spawn when no log line came), recovery start, redo applied, ready, first
// commit, as milliseconds after the kill; points never reached are left
// out. Other kinds have none.
func crashTimeline(rec *writepathv1.Run) []report.TimelineRound {
	if rec.GetKindName() != "crash" {
		return nil
	}
	var out []report.TimelineRound
	for _, ph := range rec.GetPhases() {
		if !ph.GetMeasured() {
			continue
		}
		for _, pw := range ph.GetWorkers() {
			var res crash.Result
			if len(pw.GetSummary()) == 0 || json.Unmarshal(pw.GetSummary(), &res) != nil {
				continue
			}
			for _, r := range res.Rounds {
				tl := r.Timeline
				if tl.Kill.IsZero() {
					continue
				}
				start := tl.ProcessStart
				if start.IsZero() {
					start = tl.Spawn
				}
				tr := report.TimelineRound{Round: r.Round}
				for _, p := range []struct {
					name string
					at   time.Time
				}{{"kill", tl.Kill}, {"process start", start}, {"recovery start", tl.RecoveryStart},
					{"redo applied", tl.RedoApplied}, {"ready", tl.Ready}, {"first commit", tl.FirstCommit}} {
					if !p.at.IsZero() {
						tr.Points = append(tr.Points, report.TimelinePoint{Name: p.name, Ms: float64(p.at.Sub(tl.Kill).Microseconds()) / 1000})
					}
				}
				out = append(out, tr)
			}
		}
	}
	return out
}
