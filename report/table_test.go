package report

import (
	"bytes"
	"encoding/csv"
	"slices"
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

// The columns the kinds declare (workload.Meta.Tables.Columns; cmd's
// TestKindTables holds them to these tables).
var (
	fioColumns   = []string{"throughput", "MB/s", "p99", "fsync p99", "dev p99", "delta"}
	oltpColumns  = []string{"throughput", "p95", "p99", "dev p99", "delta"}
	crashColumns = []string{"recovery", "start>query", "kill>commit", "lost", "verdict", "load tps", "load p99", "delta recovery"}
)

// TestCampaignTablePerKind: each kind's table has the columns it
// declares, whatever its name: crash
// the recovery figures, lost commits and the verdict with the delta of
// recovery time; fio MB/s and fsync p99 (only when there were syncs);
// oltp p95 beside p99; and any telemetry columns with their units.
func TestCampaignTablePerKind(t *testing.T) {
	fig := func(med, lo, hi float64, n int) campaign.Figure {
		return campaign.Figure{Median: med, Min: lo, Max: hi, N: n, Sum: med * float64(n)}
	}
	crash := campaign.Table{Campaign: "c", Kind: "crash", KindColumns: crashColumns, Groups: []string{"g"}, Baseline: "fsync",
		Columns: []campaign.Column{{Key: "w_await", Unit: "ms"}, {Key: "w/s", Unit: "/s"}},
		Rows: []campaign.Row{
			{Label: "fsync", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 900, P99: 5e6, Figures: map[string]campaign.Figure{
				campaign.FigRecoveryMS: fig(68000, 60000, 70000, 3), campaign.FigStartQueryMS: fig(69000, 61000, 71000, 3),
				campaign.FigKillCommitMS: fig(70000, 62000, 72000, 3), campaign.FigLost: {Sum: 0, N: 3}, campaign.FigCrashRounds: {Sum: 3, N: 3},
				campaign.FigLoadTPS: fig(900, 900, 900, 3), campaign.FigLoadP99MS: fig(5, 5, 5, 3),
				"w_await": fig(1.5, 1.5, 1.5, 1), "w/s": fig(2500, 2500, 2500, 1)}}}},
			{Label: "O_DIRECT", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 1000, P99: 4e6, Figures: map[string]campaign.Figure{
				campaign.FigRecoveryMS: {Median: 11000, Min: 11000, Max: 11000, N: 1, DeltaPct: -83.8}, campaign.FigLost: {Sum: 2, N: 1},
				campaign.FigCrashRounds: {Sum: 1, N: 1}, campaign.FigDamaged: {Sum: 1, N: 1},
				campaign.FigLoadTPS: fig(1000, 1000, 1000, 1), campaign.FigLoadP99MS: fig(4, 4, 4, 1)}}}},
		}}
	fio := campaign.Table{Campaign: "f", Kind: "fio", KindColumns: fioColumns, Groups: []string{"g"}, Baseline: "a",
		Rows: []campaign.Row{{Label: "a", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 5000, MBps: 20.48, P99: 1e6, SyncP99: 2e6}}}}}
	fioNoSync := fio
	fioNoSync.Rows = []campaign.Row{{Label: "a", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 5000, MBps: 20.48, P99: 1e6}}}}
	oltp := campaign.Table{Campaign: "o", Kind: "oltp", KindColumns: oltpColumns, Groups: []string{"g"}, Baseline: "a",
		Rows: []campaign.Row{{Label: "a", Aggs: []campaign.Agg{{Rounds: 1, Throughput: 800, P95: 3e6, P99: 6e6}}}}}
	for _, tt := range []struct {
		name   string
		t      campaign.Table
		f      Format
		want   []string
		unwant []string
	}{
		{"crash", crash, Markdown, []string{"| cell | g recovery | g start>query | g kill>commit | g lost | g verdict | g tps | g p99 | g Δ recovery | g w_await ms | g w/s |",
			"| fsync | 68.0 s (60.0 s–70.0 s) | 69.0 s (61.0 s–71.0 s) | 70.0 s (62.0 s–72.0 s) | 0 | ok | 900 | 5.00 ms | base | 1.50 | 2,500 |",
			"| O_DIRECT | 11.0 s | - | - | 2 | LOST 2 commits, damaged 1/1 | 1,000 | 4.00 ms | -83.8% | - | - |"}, nil},
		{"crash csv", crash, CSV, []string{"recovery_ms_median,recovery_ms_min,recovery_ms_max", "lost_acknowledged,verdict", "w_await,w/s",
			"68000.000,60000.000,70000.000", "LOST 2 commits"}, nil},
		{"fio", fio, Text, []string{"g iops", "g MB/s", "g fsync p99", "20.5", "2.00 ms"}, nil},
		{"fio without syncs", fioNoSync, Text, []string{"g MB/s"}, []string{"fsync p99"}},
		{"oltp", oltp, Markdown, []string{"| cell | g tps | g p95 | g p99 | g Δ |", "| a | 800 (0–0) | 3.00 ms | 6.00 ms | base |"}, nil},
	} {
		unit := "tps"
		if tt.t.Kind == "fio" {
			unit = "iops"
		}
		var b bytes.Buffer
		if err := WriteCampaignTable(&b, tt.t, unit, tt.f); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, b.String())
			}
		}
		for _, w := range tt.unwant {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: output has %q:\n%s", tt.name, w, b.String())
			}
		}
	}
}

// TestCampaignTableReadsDeclaredColumns: the columns follow what the
// table's kind declares, not its name: a kind report has never heard of
// gets the columns it names (and the legends of those that have one), a
// kind declaring nothing the default ones, and "crash" declaring fio's
// columns fio's table.
func TestCampaignTableReadsDeclaredColumns(t *testing.T) {
	agg := campaign.Agg{Rounds: 1, Throughput: 5000, MBps: 20.48, P95: 3e6, P99: 1e6, SyncP99: 2e6,
		Figures: map[string]campaign.Figure{campaign.FigLost: {Sum: 2, N: 1}}}
	for _, tt := range []struct {
		kind    string
		columns []string
		want    string
	}{
		{"newkind", []string{"throughput", "p95", "lost", "delta"}, "cell  g ops  g p95  g lost  g Δ"},
		{"newkind", nil, "cell  g ops  g p99  g Δ"},
		{"crash", fioColumns, "cell  g ops  g MB/s  g p99  g fsync p99  g Δ"},
	} {
		tb := campaign.Table{Campaign: "k", Kind: tt.kind, KindColumns: tt.columns, Groups: []string{"g"}, Baseline: "a",
			Rows: []campaign.Row{{Label: "a", Aggs: []campaign.Agg{agg}}}}
		var b bytes.Buffer
		if err := WriteCampaignTable(&b, tb, "ops", Text); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if len(lines) < 2 || strings.Join(strings.Fields(lines[1]), " ") != strings.Join(strings.Fields(tt.want), " ") {
			t.Errorf("%s %v: header %q, want %q", tt.kind, tt.columns, lines[1], tt.want)
		}
		if legend := strings.Contains(lines[0], "lost: acknowledged commits"); legend != slices.Contains(tt.columns, "lost") {
			t.Errorf("%s %v: title %q: lost's legend %v", tt.kind, tt.columns, lines[0], legend)
		}
	}
	if err := CheckKindColumns(append(fioColumns, "bogus")); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("CheckKindColumns(bogus) = %v", err)
	}
}
