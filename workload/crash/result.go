package crash

import (
	"time"

	"github.com/writepath/writepath/workload/crash/errlog"
	"github.com/writepath/writepath/workload/crash/ledger"
)

// The modes a run names in Result.Mode.
const (
	ModeKill          = "kill-9"
	ModePowerLoss     = "power-loss"
	ModePowerLossTorn = "power-loss+torn"
)

// ModeNote says what a kill -9 round tests, and is printed with every
// result so that nobody reads it as a durability test of the storage.
const ModeNote = "kill -9 of the server process alone leaves the OS page cache intact: " +
	"this measures InnoDB crash recovery, not fsync durability (that needs simulated power loss, --power-loss)"

// powerLossNote says what a power-loss round tests, and which of its
// figures the layer touched.
const powerLossNote = "power loss: after kill -9 every write the server had not made durable " +
	"(fsync, fdatasync, O_SYNC/O_DSYNC) is dropped, so this tests fsync durability as well as InnoDB recovery; " +
	"the load ran on the powerloss FUSE layer, whose overhead (bench/powerloss.sh measures it) lowers tps, raises fsync latency " +
	"and changes the redo left to replay, so none of these are native figures; " +
	"the restart and its recovery run on the backing directory without the layer"

// tornNote is added in power-loss+torn mode.
const tornNote = "torn writes: each un-synced write keeps a random 4 KiB-aligned prefix (torn 16 KiB pages), " +
	"from the recorded seed; the kill waits until data files hold un-synced writes"

// noteFor is the Note of a mode.
func noteFor(mode string) string {
	switch mode {
	case ModePowerLoss:
		return powerLossNote
	case ModePowerLossTorn:
		return powerLossNote + ". " + tornNote
	}
	return ModeNote
}

// Result is the summary of a crash run: every round and their medians.
type Result struct {
	Server   string   `json:"server"` // flavor and version
	Settings []string `json:"settings"`
	// Mode is kill-9, power-loss or power-loss+torn; Note explains what it
	// tests.
	Mode     string `json:"mode"`
	Note     string `json:"note"`
	KillSeed uint64 `json:"kill_seed,omitempty"`
	// TornSeed is the torn-writes seed of round 1 (round r: +r-1).
	TornSeed uint64        `json:"torn_seed,omitempty"`
	Rounds   []RoundResult `json:"rounds"`
	Summary  Summary       `json:"summary"`
}

// RoundResult is one load/kill/restart cycle.
type RoundResult struct {
	Round  int    `json:"round"`
	Failed bool   `json:"failed"`
	Error  string `json:"error,omitempty"`
	// KillAtMS is the kill moment after the load started.
	KillAtMS   float64     `json:"kill_at_ms"`
	Load       LoadStats   `json:"load"`
	LastSample *LSNSample  `json:"last_lsn_sample,omitempty"`
	Samples    []LSNSample `json:"lsn_samples,omitempty"`
	// SampleError says why no LSN sample was taken, if none was.
	SampleError string `json:"sample_error,omitempty"`
	// CheckpointAge is LSN - checkpoint at the last sample before the kill.
	CheckpointAge uint64     `json:"checkpoint_age"`
	DropCaches    DropCaches `json:"drop_caches"`
	Timeline      Timeline   `json:"timeline"`
	// Recovery is what the restart's error log said, with its lines.
	Recovery errlog.Recovery `json:"recovery"`
	Ledger   *ledger.Check   `json:"ledger,omitempty"`
	Tables   []TableCheck    `json:"tables,omitempty"`
	TablesOK bool            `json:"tables_ok"`
	// Cut is what the power cut dropped and kept (power-loss modes).
	Cut *PowerCut `json:"cut,omitempty"`
	// Verdict is what the restarted server said about its data.
	Verdict Verdict `json:"verdict"`

	ledger    *ledger.Ledger // what the load's commits acknowledged
	logFrom   int64          // error-log offset where the restart began; -1 before
	loadStart time.Time      // when the load's transactions began
}

// LoadStats is the OLTP load of one round, up to the kill.
type LoadStats struct {
	Threads      int     `json:"threads"`
	Seconds      float64 `json:"seconds"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	Errors       int64   `json:"ignored_errors"`
	Reconnects   int64   `json:"reconnects"`
	// Latencies of committed transactions, milliseconds.
	P50MS float64 `json:"p50_ms"`
	P95MS float64 `json:"p95_ms"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
}

// DropCaches records the optional page-cache drop after the kill.
type DropCaches struct {
	Requested bool   `json:"requested"`
	Done      bool   `json:"done"`
	Reason    string `json:"reason,omitempty"` // why it was refused
}

// Timeline is one restart on our clock: every point is when the harness
// saw it. Log lines are stamped when the tail read them (it polls every
// 5 ms); the first query and commit when the probe's call returned (it
// retries every 10 ms). So neighbouring points may differ by a few
// milliseconds from the truth, and the first commit may even precede the
// ready line's arrival; the log's own timestamps are kept in Recovery.
type Timeline struct {
	Kill time.Time `json:"kill"`
	// Spawn is when the harness started the server process; ProcessStart
	// when its first log line arrived.
	Spawn         time.Time `json:"spawn"`
	ProcessStart  time.Time `json:"process_start,omitzero"`
	RecoveryStart time.Time `json:"recovery_start,omitzero"`
	RedoApplied   time.Time `json:"redo_applied,omitzero"`
	Ready         time.Time `json:"ready,omitzero"`
	FirstQuery    time.Time `json:"first_query,omitzero"`
	FirstCommit   time.Time `json:"first_commit,omitzero"`
	// Phases in milliseconds (0 when a point is missing).
	KillToStartMS     float64 `json:"kill_to_start_ms"`
	StartToRecoveryMS float64 `json:"start_to_recovery_ms"`
	RecoveryToRedoMS  float64 `json:"recovery_to_redo_ms"`
	RedoToReadyMS     float64 `json:"redo_to_ready_ms"`
	ReadyToCommitMS   float64 `json:"ready_to_commit_ms"`
	// RecoveryMS: first crash-recovery marker to ready for connections.
	RecoveryMS float64 `json:"recovery_ms"`
	// StartToQueryMS: process start to the first successful query.
	StartToQueryMS float64 `json:"start_to_query_ms"`
	// KillToCommitMS: the whole outage as a client sees it.
	KillToCommitMS float64 `json:"kill_to_commit_ms"`
}

// fill sets the timeline's points from the restart's log and computes
// the phases.
func (t *Timeline) fill(r errlog.Recovery) {
	at := func(ev *errlog.Event) time.Time {
		if ev == nil {
			return time.Time{}
		}
		return ev.Arrival
	}
	t.ProcessStart, t.RecoveryStart = at(r.ProcessStart), at(r.RecoveryStart)
	t.RedoApplied, t.Ready = at(r.RedoApplied), at(r.Ready)
	start := t.ProcessStart
	if start.IsZero() {
		start = t.Spawn
	}
	t.KillToStartMS = span(t.Kill, start)
	t.StartToRecoveryMS = span(start, t.RecoveryStart)
	t.RecoveryToRedoMS = span(t.RecoveryStart, t.RedoApplied)
	t.RedoToReadyMS = span(t.RedoApplied, t.Ready)
	t.ReadyToCommitMS = span(t.Ready, t.FirstCommit)
	t.RecoveryMS = span(t.RecoveryStart, t.Ready)
	t.StartToQueryMS = span(start, t.FirstQuery)
	t.KillToCommitMS = span(t.Kill, t.FirstCommit)
}

// span is b-a in milliseconds, 0 when either is unknown.
func span(a, b time.Time) float64 {
	if a.IsZero() || b.IsZero() {
		return 0
	}
	return msOf(b.Sub(a))
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
