package main

import (
	"encoding/json"
	"testing"

	"github.com/writepath/writepath/campaign"
	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/crash"
	"github.com/writepath/writepath/workload/crash/ledger"
)

// TestCrashFiguresAreTheTables: every figure the crash kind reports is one
// the campaign table knows (campaign.Fig*), and the kind registers it.
func TestCrashFiguresAreTheTables(t *testing.T) {
	known := map[string]bool{campaign.FigRecoveryMS: true, campaign.FigStartQueryMS: true, campaign.FigKillCommitMS: true,
		campaign.FigLost: true, campaign.FigCrashRounds: true, campaign.FigFailed: true, campaign.FigDamaged: true,
		campaign.FigKnownGap: true, campaign.FigLoadTPS: true, campaign.FigLoadP99MS: true}
	b, _ := json.Marshal(crash.Result{Rounds: []crash.RoundResult{{Round: 1, Load: crash.LoadStats{TPS: 1, P99MS: 1},
		Timeline: crash.Timeline{RecoveryMS: 1, StartToQueryMS: 1, KillToCommitMS: 1}, Ledger: &ledger.Check{}}}})
	figs, err := crash.Figures(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != len(known) {
		t.Errorf("crash.Figures gives %d figures, the table knows %d: %v", len(figs), len(known), figs)
	}
	for k := range figs {
		if !known[k] {
			t.Errorf("crash figure %q is not a campaign.Fig* key", k)
		}
	}
	if m, ok := workload.ByName("crash"); !ok || m.Figures == nil {
		t.Error("the crash kind does not register its Figures")
	}
}

func TestColumnsFlag(t *testing.T) {
	for in, ok := range map[string]bool{"": true, "none": true, "w/s,w_await,%util": true, "log_waits/s, dirty": true, "w/s,bogus": false} {
		c := columnsFlag{value: in}
		if _, err := c.columns(); (err == nil) != ok {
			t.Errorf("--columns %q: err = %v", in, err)
		}
	}
}
