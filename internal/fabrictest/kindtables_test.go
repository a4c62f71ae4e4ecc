package fabrictest_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/internal/fabrictest"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload"
)

// TestKindDeclaresItsTables: a campaign of the synth kind, which no
// reader names, is accepted because synth is registered and gets the
// unit and columns its Meta.Tables declares, in the plan, the table,
// its text and CSV and the HTML report's data, handed over as the
// command does (client.Kind from the Meta).
func TestKindDeclaresItsTables(t *testing.T) {
	meta, ok := workload.ByName("synth")
	if !ok {
		t.Fatal("synth kind not registered")
	}
	k := client.Kind{Txn: meta.Tables.Txn, Unit: meta.Tables.Unit, Columns: meta.Tables.Columns, Figures: meta.Figures}
	var kinds []string
	for _, m := range workload.Kinds() {
		kinds = append(kinds, m.Name)
	}
	text := []byte("name: k\nworkload: synth\nmatrix:\n  --seed: [1]\noptions: [--ops=200, --duration=300ms]\nrounds: 1\nwindow: 0s-end\n")
	spec, err := campaign.Parser{Workloads: kinds}.Parse("k.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	build := func(args []string) (*anypb.Any, error) {
		b, err := meta.FromArgs(args)
		return &anypb.Any{TypeUrl: meta.Kind, Value: b}, err
	}
	plan, err := client.Plan(spec, build, client.PlanOptions{File: "k.yaml", Text: text, Interval: 100 * time.Millisecond, Kind: k})
	if err != nil {
		t.Fatal(err)
	}
	if u := plan.GetAggregation().GetUnit(); u != "ops" {
		t.Errorf("plan's unit %q; want synth's ops", u)
	}
	f := fabrictest.Start(t, fabrictest.Options{Workers: 1})
	c := client.New(f.Control())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.SubmitCampaign(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchCampaign(ctx, sub.GetId(), nil)
	if err != nil || final.GetState() != writepathv1.CampaignState_CAMPAIGN_STATE_FINISHED {
		t.Fatalf("campaign = %v (%s), %v; want FINISHED", final.GetState(), final.GetReason(), err)
	}
	res, err := client.BuildCampaignTableWith(ctx, c, final, client.TableOptions{Kind: k})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Table.Rows[0].Aggs[0]; res.Unit != "ops" || a.Rounds != 1 || a.Throughput <= 0 || a.MBps <= 0 {
		t.Errorf("table: unit %q, %+v; want ops and one round with throughput and MB/s", res.Unit, a)
	}
	var txt, csv, html bytes.Buffer
	if err := report.WriteCampaignTable(&txt, res.Table, res.Unit, report.Text); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCampaignTable(&csv, res.Table, res.Unit, report.CSV); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCampaignHTML(&html, report.Campaign{Table: res.Table, Unit: res.Unit}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(txt.String(), "\n")
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "cell all ops all MB/s all p99 all Δ" {
		t.Errorf("text header %q; want synth's columns", got)
	}
	if !strings.HasPrefix(csv.String(), "cell,group,rounds,ops_median,ops_min,ops_max,p99_ms_median,p99_ms_min,p99_ms_max,delta_pct,MBps_median\n") {
		t.Errorf("CSV:\n%s", csv.String())
	}
	if !strings.Contains(html.String(), `"all MB/s"`) {
		t.Errorf("HTML report's table has no synth MB/s column")
	}
}
