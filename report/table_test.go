package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/writepath/writepath/campaign"
)

func sampleTable() campaign.Table {
	return campaign.Table{
		Campaign: "flush", Groups: []string{"pl1", "nvme"}, Baseline: "fsync",
		Rows: []campaign.Row{
			{Label: "fsync", Aggs: []campaign.Agg{
				{Rounds: 3, Throughput: 3820, ThroughputMin: 3700, ThroughputMax: 3900, P99: 4_100_000},
				{Rounds: 3, Throughput: 11200, ThroughputMin: 11000, ThroughputMax: 11500, P99: 1_000_000}}},
			{Label: "O_DSYNC", Aggs: []campaign.Agg{
				{Rounds: 3, Throughput: 1910, ThroughputMin: 1900, ThroughputMax: 1950, P99: 88_000_000, DeltaPct: -50},
				{}}},
		},
	}
}

func TestWriteCampaignTable(t *testing.T) {
	tests := []struct {
		f    Format
		want []string
	}{
		{Text, []string{"pl1 tps", "3,820 (3,700–3,900)", "4.10 ms", "base", "-50.0%", "88.0 ms"}},
		{Markdown, []string{"| cell | pl1 tps | pl1 p99 | pl1 Δ |", "| O_DSYNC | 1,910 (1,900–1,950) | 88.0 ms | -50.0% | - | - | - |"}},
		{JSON, []string{`"Campaign": "flush"`, `"Throughput": 3820`}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteCampaignTable(&b, sampleTable(), "tps", tt.f); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s output lacks %q:\n%s", tt.f, w, b.String())
			}
		}
	}
}

func TestCampaignCSVParses(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCampaignTable(&b, sampleTable(), "tps", CSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[1][0] != "fsync" || recs[1][3] != "3820.00" || recs[3][9] != "-50.00" || recs[4][2] != "0" {
		t.Errorf("CSV = %v", recs)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": Text, "md": Markdown, "csv": CSV, "json": JSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) succeeded")
	}
}

// TestCampaignTableDeviceP99: with traced runs (block series) every group
// gets the devices' p99 write latency beside the workload's p99; a cell
// without it prints "-".
func TestCampaignTableDeviceP99(t *testing.T) {
	tb := sampleTable()
	tb.Rows[0].Aggs[0].DeviceP99 = 1_250_000
	for _, tt := range []struct {
		f    Format
		want []string
	}{
		{Text, []string{"pl1 dev p99", "dev p99: the devices' write latency", "| 1.25 ms"[2:]}},
		{Markdown, []string{"| cell | pl1 tps | pl1 p99 | pl1 dev p99 | pl1 Δ |", "| 4.10 ms | 1.25 ms | base |", "| 88.0 ms | - | -50.0% |"}},
		{CSV, []string{"device_write_p99_ms_median", ",1.250\n"}},
	} {
		var b bytes.Buffer
		if err := WriteCampaignTable(&b, tb, "tps", tt.f); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s output lacks %q:\n%s", tt.f, w, b.String())
			}
		}
	}
	var b bytes.Buffer
	_ = WriteCampaignTable(&b, sampleTable(), "tps", Text)
	if strings.Contains(b.String(), "dev p99") {
		t.Errorf("untraced table has a dev p99 column:\n%s", b.String())
	}
}
