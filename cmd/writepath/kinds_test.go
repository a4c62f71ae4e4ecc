package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/workload"
)

// TestKindTables: what each kind declares (workload.Meta.Tables) gives
// the lines and tables the readers printed when they switched on its
// name: fio's IOPS with MB/s and the syncs' p99, oltp's and crash's
// transactions, crash's recovery columns and their legend. Every
// kind's columns are report's.
func TestKindTables(t *testing.T) {
	for _, m := range workload.Kinds() {
		if err := report.CheckKindColumns(m.Tables.Columns); err != nil {
			t.Errorf("kind %s: %v", m.Name, err)
		}
	}
	agg := campaign.Agg{Rounds: 1, Throughput: 900, MBps: 3.6, P95: 3e6, P99: 5e6, SyncP99: 2e6}
	for _, tt := range []struct {
		kind, unit, header, legend string
		txn                        bool
	}{
		{"fio", "iops", "cell g iops g MB/s g p99 g fsync p99 g Δ", "", false},
		{"oltp", "tps", "cell g tps g p95 g p99 g Δ", "", true},
		{"crash", "tps", "cell g recovery g start>query g kill>commit g lost g verdict g tps g p99 g Δ recovery",
			"; recovery: first recovery marker to ready, start>query: process start to first query, kill>commit: kill to first commit (median, min–max over crash rounds), lost: acknowledged commits missing after restart (sum)", true},
		{"nosuchkind", "tps", "cell g tps g p99 g Δ", "", false},
	} {
		k := kindOf(tt.kind)
		unit := k.Unit
		if unit == "" {
			unit = "tps"
		}
		if k.Txn != tt.txn || unit != tt.unit {
			t.Errorf("%s: Txn %v, unit %q; want %v, %q", tt.kind, k.Txn, unit, tt.txn, tt.unit)
		}
		tb := campaign.Table{Campaign: "c", Kind: tt.kind, KindColumns: k.Columns, Groups: []string{"g"}, Baseline: "a",
			Rows: []campaign.Row{{Label: "a", Aggs: []campaign.Agg{agg}}}}
		var b bytes.Buffer
		if err := report.WriteCampaignTable(&b, tb, unit, report.Text); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if got := strings.Join(strings.Fields(lines[1]), " "); got != tt.header {
			t.Errorf("%s: header %q; want %q", tt.kind, got, tt.header)
		}
		if want := "campaign c — median of rounds over 0s-end (min–max), p99 from merged histograms" + tt.legend; lines[0] != want {
			t.Errorf("%s: title %q; want %q", tt.kind, lines[0], want)
		}
	}
}

// TestCampaignWorkloadsAreTheKinds: the workloads a campaign may name are
// the kinds this binary registers, listed as the registry sorts them.
func TestCampaignWorkloadsAreTheKinds(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(spec, []byte("name: c\nworkload: tpcc\nmatrix: {--bs: [4k]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, dir, "campaign", "run", spec)
	want := `c.yaml:2:11: unknown workload "tpcc" (known: ` + strings.Join(kindNames(), ", ") + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("campaign run of a tpcc spec: %v; want %q", err, want)
	}
	if !slices.Contains(kindNames(), "fio") {
		t.Errorf("kinds %v lack fio", kindNames())
	}
}
