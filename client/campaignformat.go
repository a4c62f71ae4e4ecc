package client

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// CampaignStateName is a campaign state in lower case ("running").
func CampaignStateName(s writepathv1.CampaignState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "CAMPAIGN_STATE_"))
}

// WriteCampaigns lists campaigns, one line each.
func WriteCampaigns(w io.Writer, list []*writepathv1.Campaign) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tRUNS\tCREATED")
	for _, c := range list {
		p := Progress(c)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\n", c.GetId(), c.GetPlan().GetName(), CampaignStateName(c.GetState()),
			p.Done, p.Total, c.GetCreated().AsTime().Local().Format(time.DateTime))
	}
	return tw.Flush()
}

// WriteCampaignStatus prints a campaign's state and progress.
func WriteCampaignStatus(w io.Writer, c *writepathv1.Campaign) {
	p := Progress(c)
	fmt.Fprintf(w, "campaign %s (%s): %s, %d of %d runs done, %d of %d cells complete\n", c.GetId(), c.GetPlan().GetName(),
		CampaignStateName(c.GetState()), p.Done, p.Total, p.CellsDone, p.Cells)
	if r := c.GetReason(); r != "" {
		fmt.Fprintf(w, "  reason: %s\n", r)
	}
}

// CampaignProgress is how far a campaign is.
type CampaignProgress struct {
	Done, Total      int
	Cells, CellsDone int
	// Running are the planned runs in flight.
	Running []*writepathv1.PlannedRun
	// ETA is the time left at the mean duration of the runs done so far,
	// one batch after another; zero when nothing finished yet.
	ETA time.Duration
}

// Progress computes a campaign's progress from its record.
func Progress(c *writepathv1.Campaign) CampaignProgress {
	plan := c.GetPlan().GetRuns()
	p := CampaignProgress{Total: len(plan)}
	cellLeft := map[string]int{}
	var spent time.Duration
	timed := 0
	batchesLeft := map[uint32]bool{}
	for i, cr := range c.GetRuns() {
		pr := plan[i]
		cellLeft[pr.GetCell()] += 0
		if cr.GetDone() {
			p.Done++
			if cr.GetStarted() != nil && cr.GetEnded() != nil {
				spent += cr.GetEnded().AsTime().Sub(cr.GetStarted().AsTime())
				timed++
			}
			continue
		}
		cellLeft[pr.GetCell()]++
		batchesLeft[pr.GetBatch()] = true
		if cr.GetRunId() != "" && cr.GetError() == "" {
			p.Running = append(p.Running, pr)
		}
	}
	p.Cells = len(cellLeft)
	for _, n := range cellLeft {
		if n == 0 {
			p.CellsDone++
		}
	}
	if timed > 0 {
		p.ETA = spent / time.Duration(timed) * time.Duration(len(batchesLeft))
	}
	return p
}

// CampaignPrinter prints a progress line whenever a campaign's record
// changes in a way a person cares about.
type CampaignPrinter struct {
	W    io.Writer
	last string
}

// Change is the callback for WatchCampaign.
func (p *CampaignPrinter) Change(c *writepathv1.Campaign) {
	pr := Progress(c)
	var running []string
	for _, r := range pr.Running {
		running = append(running, fmt.Sprintf("%s on %s round %d (run %s)", r.GetCell(), r.GetGroup(), r.GetRound(), c.GetRuns()[r.GetIndex()].GetRunId()))
	}
	line := fmt.Sprintf("[%d/%d runs, %d/%d cells] %s", pr.Done, pr.Total, pr.CellsDone, pr.Cells, CampaignStateName(c.GetState()))
	if len(running) > 0 {
		line += ": " + strings.Join(running, "; ")
	}
	if pr.ETA > 0 && pr.Done < pr.Total {
		line += fmt.Sprintf(" · ETA %s", pr.ETA.Round(time.Second))
	}
	if line != p.last {
		fmt.Fprintf(p.W, "%s %s\n", time.Now().Format("15:04:05"), line)
		p.last = line
	}
}
