package crash

import (
	"encoding/json"
	"fmt"
)

// Figures reads a crash run's summary (a Result) into the figures a
// campaign table aggregates (package campaign's Fig* keys): per crash
// round the recovery time, process start to first query and kill to first
// commit, the load's tps and p99 up to the kill (rounds that failed, or a point the restart never reached, give
// no sample), and per round 1/0 for a failure and for damage plus the
// acknowledged commits lost, which the table sums.
func Figures(summary []byte) (map[string][]float64, error) {
	var res Result
	if err := json.Unmarshal(summary, &res); err != nil {
		return nil, fmt.Errorf("crash summary: %w", err)
	}
	out := map[string][]float64{}
	add := func(k string, v float64) { out[k] = append(out[k], v) }
	for _, r := range res.Rounds {
		add("crash_rounds", 1)
		add("failed", b2f(r.Failed))
		add("damaged", b2f(r.Verdict.Damaged()))
		add("known_gap", b2f(r.Verdict.KnownGap != ""))
		if r.Ledger != nil {
			add("lost_acknowledged", float64(r.Ledger.LostAcknowledged))
		}
		if r.Failed {
			continue
		}
		for k, v := range map[string]float64{"load_tps": r.Load.TPS, "load_p99_ms": r.Load.P99MS, "recovery_ms": r.Timeline.RecoveryMS,
			"start_to_query_ms": r.Timeline.StartToQueryMS, "kill_to_commit_ms": r.Timeline.KillToCommitMS} {
			if v > 0 {
				add(k, v)
			}
		}
	}
	return out, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
