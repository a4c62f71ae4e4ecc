package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/writepath/writepath/client"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/runview"
)

// isCampaignID tells campaign ids ("c-2026...") from run ids.
func isCampaignID(id string) bool { return strings.HasPrefix(id, "c-") }

// maxReportRuns bounds the runs drawn below a campaign's chart: the first
// round of each cell x group, so a big matrix still makes a file a browser
// opens quickly.
const maxReportRuns = 24

// campaignReport builds what report.WriteCampaignHTML draws: the table (the
// cell x group bars with the rounds' spread) and the first round's runs.
func campaignReport(ctx context.Context, src client.CampaignSource, rec *writepathv1.Campaign, cols []string) (report.Campaign, error) {
	res, err := campaignTable(ctx, src, rec, cols)
	if err != nil {
		return report.Campaign{}, err
	}
	out := report.Campaign{Table: res.Table, Unit: res.Unit}
	for i, cr := range rec.GetRuns() {
		p := rec.GetPlan().GetRuns()[i]
		if !cr.GetDone() || p.GetRound() != 1 || len(out.Runs) >= maxReportRuns {
			continue
		}
		detail, err := results.Read(ctx, src, cr.GetRunId(), results.PerWorker)
		if err != nil {
			return out, err
		}
		r, err := runview.Run(detail)
		if err != nil {
			return out, fmt.Errorf("run %s: %w", cr.GetRunId(), err)
		}
		r.Title = fmt.Sprintf("%s on %s, round 1 (run %s)", p.GetCell(), p.GetGroup(), cr.GetRunId())
		r.Timeline = runTimeline(detail.Record)
		out.Runs = append(out.Runs, r)
	}
	return out, nil
}

// writeCampaignReport writes a campaign's HTML report to path.
func writeCampaignReport(ctx context.Context, src client.CampaignSource, rec *writepathv1.Campaign, path string, cols []string) error {
	c, err := campaignReport(ctx, src, rec, cols)
	if err != nil {
		return err
	}
	return writeHTMLFile(path, func(f *os.File) error { return report.WriteCampaignHTML(f, c) })
}

// writeHTMLFile creates path and fills it with write.
func writeHTMLFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// reportCampaign is `writepath report CAMPAIGN`.
func (o *reportOptions) reportCampaign(ctx context.Context, id string) error {
	src, err := o.openCampaigns()
	if err != nil {
		return err
	}
	defer src.Close()
	rec, err := src.GetCampaign(ctx, id)
	if err != nil {
		return err
	}
	cols, err := o.cols.columns()
	if err != nil {
		return err
	}
	return writeCampaignReport(ctx, src, rec, o.out, cols)
}
