package crash

import (
	"sort"
)

// Stat is the median, minimum and maximum of one figure over the rounds
// that succeeded.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Summary aggregates the rounds: medians for times and rates (as the
// field reports them), totals for durability.
type Summary struct {
	Rounds int `json:"rounds"`
	Failed int `json:"failed"`
	// RecoveryMS: first crash-recovery marker to ready for connections.
	RecoveryMS     Stat `json:"recovery_ms"`
	StartToQueryMS Stat `json:"start_to_query_ms"`
	KillToCommitMS Stat `json:"kill_to_commit_ms"`
	RedoSpan       Stat `json:"redo_span"`
	CheckpointAge  Stat `json:"checkpoint_age"`
	TPS            Stat `json:"tps"`
	P99MS          Stat `json:"p99_ms"`
	// LostAcknowledged sums acknowledged commits lost over all rounds.
	LostAcknowledged      int64 `json:"lost_acknowledged"`
	PresentUnacknowledged int64 `json:"present_unacknowledged"`
	// TablesOK is true when CHECK TABLE passed on every table of every
	// round that got that far.
	TablesOK bool `json:"tables_ok"`
	// DataTornRounds counts rounds whose power cut tore tablespace writes;
	// Damaged counts rounds whose restart refused to start, failed CHECK
	// TABLE or logged corruption.
	DataTornRounds int `json:"data_torn_rounds,omitempty"`
	Damaged        int `json:"damaged"`
	// KnownGapRounds counts the damaged rounds whose damage a known server
	// gap explains entirely (Verdict.KnownGap).
	KnownGapRounds int `json:"known_gap_rounds,omitempty"`
}

func summarize(rounds []RoundResult) Summary {
	s := Summary{Rounds: len(rounds), TablesOK: true}
	var rec, q, kc, span, age, tps, p99 []float64
	for _, r := range rounds {
		if r.Ledger != nil {
			s.LostAcknowledged += r.Ledger.LostAcknowledged
			s.PresentUnacknowledged += r.Ledger.PresentUnacknowledged
		}
		if r.Tables != nil && !r.TablesOK {
			s.TablesOK = false
		}
		if r.Cut != nil && r.Cut.DataTornWrites > 0 {
			s.DataTornRounds++
		}
		if r.Verdict.Damaged() {
			s.Damaged++
		}
		if r.Verdict.KnownGap != "" {
			s.KnownGapRounds++
		}
		if r.Failed {
			s.Failed++
			continue
		}
		rec = append(rec, r.Timeline.RecoveryMS)
		q = append(q, r.Timeline.StartToQueryMS)
		kc = append(kc, r.Timeline.KillToCommitMS)
		span = append(span, float64(r.Recovery.RedoSpan))
		age = append(age, float64(r.CheckpointAge))
		tps = append(tps, r.Load.TPS)
		p99 = append(p99, r.Load.P99MS)
	}
	s.RecoveryMS, s.StartToQueryMS, s.KillToCommitMS = stat(rec), stat(q), stat(kc)
	s.RedoSpan, s.CheckpointAge, s.TPS, s.P99MS = stat(span), stat(age), stat(tps), stat(p99)
	return s
}

// stat is the median (mean of the middle two for an even count), min and
// max of v.
func stat(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stat{Median: med, Min: s[0], Max: s[n-1], N: n}
}
