package crash

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText prints the result for a terminal: what was tested, one row per
// round, the median/min/max, and each round's timeline.
func (r Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "crash recovery: %s, mode %s", r.Server, r.Mode)
	if len(r.Settings) > 0 {
		fmt.Fprintf(w, ", --set %s", strings.Join(r.Settings, " --set "))
	}
	fmt.Fprintf(w, "\nNOTE: %s.\n\n", r.Note)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tkill_at_s\ttps\tp99_ms\tckpt_age\tredo_span\tbatches\tpages\trecovery_ms\tstart>query_ms\tkill>commit_ms\tacked\tlost\tunacked_present\tcheck\tdrop_caches\t")
	for _, rr := range r.Rounds {
		writeRound(tw, rr)
	}
	s := r.Summary
	for _, row := range []struct {
		name string
		pick func(Stat) float64
	}{{"median", func(s Stat) float64 { return s.Median }}, {"min", func(s Stat) float64 { return s.Min }},
		{"max", func(s Stat) float64 { return s.Max }}} {
		p := row.pick
		fmt.Fprintf(tw, "%s\t\t%.0f\t%.2f\t%.0f\t%.0f\t\t\t%.0f\t%.0f\t%.0f\t\t\t\t\t\t\n", row.name,
			p(s.TPS), p(s.P99MS), p(s.CheckpointAge), p(s.RedoSpan), p(s.RecoveryMS), p(s.StartToQueryMS), p(s.KillToCommitMS))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrounds %d, failed %d; lost acknowledged commits: %d; present but unacknowledged (legal): %d; CHECK TABLE all OK: %v; damaged data detected in %d round(s)\n",
		s.Rounds, s.Failed, s.LostAcknowledged, s.PresentUnacknowledged, s.TablesOK, s.Damaged)
	if s.KnownGapRounds > 0 {
		fmt.Fprintf(w, "of the damaged rounds, %d show only a known server gap (see each round's verdict)\n", s.KnownGapRounds)
	}
	if r.Mode == ModePowerLossTorn {
		fmt.Fprintf(w, "rounds whose cut tore tablespace (.ibd) writes: %d of %d (torn seed %d, round r uses seed+r-1)\n", s.DataTornRounds, s.Rounds, r.TornSeed)
	}
	for _, rr := range r.Rounds {
		writeTimeline(w, rr)
	}
	for _, rr := range r.Rounds {
		writePower(w, rr)
	}
	for _, rr := range r.Rounds {
		if rr.Failed {
			fmt.Fprintf(w, "round %d FAILED: %s\n", rr.Round, rr.Error)
		}
	}
	return nil
}

func writeRound(w io.Writer, rr RoundResult) {
	if rr.Failed {
		fmt.Fprintf(w, "%d\t%.1f\tFAILED\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", rr.Round, rr.KillAtMS/1000)
		return
	}
	var acked, lost, extra int64
	if l := rr.Ledger; l != nil {
		acked, lost, extra = l.Acknowledged, l.LostAcknowledged, l.PresentUnacknowledged
	}
	check := "OK"
	if !rr.TablesOK {
		check = "FAILED"
	}
	fmt.Fprintf(w, "%d\t%.1f\t%.0f\t%.2f\t%d\t%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%d\t%d\t%d\t%s\t%s\t\n",
		rr.Round, rr.KillAtMS/1000, rr.Load.TPS, rr.Load.P99MS, rr.CheckpointAge, rr.Recovery.RedoSpan,
		rr.Recovery.Batches, rr.Recovery.PagesToRecover, rr.Timeline.RecoveryMS, rr.Timeline.StartToQueryMS,
		rr.Timeline.KillToCommitMS, acked, lost, extra, check, rr.DropCaches.String())
}

// String is "no", "done" or "refused (reason)".
func (d DropCaches) String() string {
	switch {
	case !d.Requested:
		return "no"
	case d.Done:
		return "done"
	}
	return "refused (" + d.Reason + ")"
}

// writePower prints what the power cut did and what the restarted server
// said about the data.
func writePower(w io.Writer, rr RoundResult) {
	if rr.Cut != nil {
		fmt.Fprintf(w, "round %d %s\n", rr.Round, rr.Cut)
	}
	v := rr.Verdict
	var says []string
	if v.RefusedStart {
		says = append(says, "the server refused to start")
	}
	if v.CheckFailed {
		says = append(says, "CHECK TABLE failed")
	}
	if len(v.Corrupt) > 0 {
		says = append(says, fmt.Sprintf("%d corruption line(s), first error: %s", v.CorruptLines, firstError(v.Corrupt)))
	}
	if len(v.Doublewrite) > 0 {
		says = append(says, fmt.Sprintf("%d doublewrite line(s), first: %s", v.DoublewriteLines, v.Doublewrite[0]))
	}
	if len(says) > 0 {
		fmt.Fprintf(w, "round %d verdict: %s\n", rr.Round, strings.Join(says, "; "))
	}
	if v.KnownGap != "" {
		fmt.Fprintf(w, "round %d: all of this damage is a known server gap (%s): %s\n", rr.Round, v.KnownGap, strings.Join(v.Page0Unrestored, ", "))
	}
	if rr.Cut != nil {
		for _, tp := range rr.Cut.TornPages {
			if tp.Page == 0 || !tp.CopyUsable { // the others the doublewrite buffer covers
				fmt.Fprintf(w, "round %d torn page: %s\n", rr.Round, tp)
			}
		}
		if rr.Cut.InspectError != "" {
			fmt.Fprintf(w, "round %d torn pages not fully inspected: %s\n", rr.Round, rr.Cut.InspectError)
		}
	}
}

// firstError is the first [ERROR] line of lines, else the first line.
func firstError(lines []string) string {
	for _, l := range lines {
		if strings.Contains(l, "[ERROR]") {
			return l
		}
	}
	return lines[0]
}

// writeTimeline prints the points of one restart in milliseconds after
// the kill ("-" when a point was not seen).
func writeTimeline(w io.Writer, rr RoundResult) {
	t := rr.Timeline
	if t.Kill.IsZero() || rr.Failed && t.Ready.IsZero() {
		return
	}
	at := func(name string, p time.Time) string {
		if p.IsZero() {
			return name + " -"
		}
		return fmt.Sprintf("%s +%.0f", name, span(t.Kill, p))
	}
	fmt.Fprintf(w, "round %d timeline (ms after kill): kill 0 -> %s -> %s -> %s -> %s -> %s\n", rr.Round,
		at("process start", t.ProcessStart), at("recovery start", t.RecoveryStart),
		at("redo applied", t.RedoApplied), at("ready", t.Ready), at("first commit", t.FirstCommit))
}
