package crash

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/writepath/writepath/workload/crash/ledger"
)

// TestFigures: a crash run's summary becomes the campaign table's figures,
// one sample per round; a failed round counts as failed and gives no
// times, a point never reached gives no sample.
func TestFigures(t *testing.T) {
	res := Result{Rounds: []RoundResult{
		{Round: 1, Load: LoadStats{TPS: 1000, P99MS: 4}, Timeline: Timeline{RecoveryMS: 1200, StartToQueryMS: 1500, KillToCommitMS: 1700}, Ledger: &ledger.Check{LostAcknowledged: 0}},
		{Round: 2, Timeline: Timeline{RecoveryMS: 900, StartToQueryMS: 1100}, Ledger: &ledger.Check{LostAcknowledged: 3}},
		{Round: 3, Failed: true, Timeline: Timeline{RecoveryMS: 5}},
	}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Figures(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{
		"crash_rounds": {1, 1, 1}, "failed": {0, 0, 1}, "damaged": {0, 0, 0}, "known_gap": {0, 0, 0},
		"lost_acknowledged": {0, 3}, "recovery_ms": {1200, 900}, "start_to_query_ms": {1500, 1100}, "kill_to_commit_ms": {1700},
		"load_tps": {1000}, "load_p99_ms": {4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Figures = %v\nwant %v", got, want)
	}
	if _, err := Figures([]byte("{")); err == nil {
		t.Error("Figures of a broken summary succeeded")
	}
}
