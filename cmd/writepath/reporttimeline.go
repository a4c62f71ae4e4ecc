package main

import (
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload"
)

// runTimeline is a run's timelines for the report (a crash run's restart
// per round), read by its kind's Meta.Timeline from each worker's summary
// of the measured phases. Kinds without one have none; a summary that does
// not read is left out, and the report draws the others.
func runTimeline(rec *writepathv1.Run) []report.TimelineRound {
	m, ok := workload.ByName(rec.GetKindName())
	if !ok || m.Timeline == nil {
		return nil
	}
	var out []report.TimelineRound
	for _, ph := range rec.GetPhases() {
		if !ph.GetMeasured() {
			continue
		}
		for _, pw := range ph.GetWorkers() {
			if len(pw.GetSummary()) == 0 {
				continue
			}
			rounds, err := m.Timeline(pw.GetSummary())
			if err != nil {
				continue
			}
			for _, r := range rounds {
				tr := report.TimelineRound{Round: r.Round}
				for _, p := range r.Points {
					tr.Points = append(tr.Points, report.TimelinePoint{Name: p.Name, Ms: p.Ms})
				}
				out = append(out, tr)
			}
		}
	}
	return out
}
