package client

import (
	"fmt"
	"slices"
	"strings"
	"time"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// TxnOp is the operation of kinds that run transactions (oltp, crash):
// their lines and tables count transactions per second and show
// sysbench's 95th percentile beside p99.
const TxnOp = "trx"

// uncorrectedOp is an open-loop oltp run's service time (latency from
// the actual, not the intended, start): in the summary, not on the lines.
const uncorrectedOp = "trx_uncorrected"

// Liner formats the interval lines of one run. The columns follow the
// kind: transactions (tps, qps, p50/p95/p99) or I/O operations (each op's
// ops/s, its own MB/s, p50/p99; the primary op's p99.9 too). The ops a
// line shows only grow, in a fixed order, so a column stays where it was
// even in an interval without that op.
type Liner struct {
	// Txn: the run's kind's primary operation is a transaction
	// (Kind.Txn); a run that records TxnOp has transaction lines too.
	Txn bool
	// D is the run's interval.
	D time.Duration

	ops      []string        // ops shown, in display order
	bytes    map[string]bool // ops with a <op>_bytes counter seen
	counters map[string]bool // counters seen
	openLoop bool            // an oltp --rate run (it records uncorrected latency)
}

// Line formats one merged interval; workers is how many workers the phase
// was placed on.
func (l *Liner) Line(mi *writepathv1.MergedInterval, workers int) string {
	l.learn(mi)
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %11s ", mi.GetPhase(), spanLabel(mi, l.D))
	if l.transactional() {
		l.txnColumns(&b, mi)
	} else {
		l.opColumns(&b, mi)
	}
	fmt.Fprintf(&b, "  workers %d/%d", len(mi.GetReporting()), max(workers, len(mi.GetReporting())))
	if len(mi.GetMissing()) > 0 {
		b.WriteString(" (missing " + strings.Join(mi.GetMissing(), ",") + ")")
	}
	return b.String()
}

func (l *Liner) transactional() bool {
	return l.Txn || slices.Contains(l.ops, TxnOp)
}

// learn adds the interval's ops and counters to those shown.
func (l *Liner) learn(mi *writepathv1.MergedInterval) {
	if l.bytes == nil {
		l.bytes, l.counters = map[string]bool{}, map[string]bool{}
	}
	for _, s := range mi.GetStats() {
		l.openLoop = l.openLoop || s.GetOp() == uncorrectedOp
		if op := s.GetOp(); !series.Is(op) && op != uncorrectedOp && !slices.Contains(l.ops, op) {
			l.ops = append(l.ops, op)
			slices.SortStableFunc(l.ops, func(a, b string) int { return opRank(a) - opRank(b) })
		}
	}
	for k := range mi.GetCounters() {
		l.counters[k] = true
		if op, ok := strings.CutSuffix(k, "_"+BytesSuffix); ok {
			l.bytes[op] = true
		}
	}
}

// opRank orders ops on a line: the write path first, then reads, then the
// syncs that make writes durable, then anything else (in arrival order).
func opRank(op string) int {
	switch op {
	case TxnOp:
		return 0
	case "write":
		return 1
	case "read":
		return 2
	case "trim":
		return 3
	case "sync", "fsync", "fdatasync":
		return 4
	}
	return 5
}

// opColumns writes each op's ops/s, MB/s (when it moves bytes), p50 and
// p99; the first (primary) op's p99.9 too.
func (l *Liner) opColumns(b *strings.Builder, mi *writepathv1.MergedInterval) {
	secs := mi.GetSeconds()
	for i, op := range l.ops {
		s := opStat(mi, op)
		if i > 0 {
			b.WriteString(" |")
		}
		fmt.Fprintf(b, " %s %7.0f ops/s", op, perSec(s.GetCount(), secs))
		if l.bytes[op] {
			fmt.Fprintf(b, " %7.2f MB/s", perSec(mi.GetCounters()[op+"_"+BytesSuffix], secs)/1e6)
		}
		fmt.Fprintf(b, " p50 %s p99 %s", latMs(s, s.GetP50()), latMs(s, s.GetP99()))
		if i == 0 {
			fmt.Fprintf(b, " p99.9 %s", latMs(s, s.GetP999()))
		}
		b.WriteString(" ms")
	}
	if len(l.ops) == 0 {
		b.WriteString(" no operations yet")
	}
}

// txnColumns writes sysbench's figures of an interval: tps, qps with
// writes/other (when counted), latency p50/p95/p99, errors and reconnects
// per second (when counted), late transactions of an open loop, and the
// crash kind's round.
func (l *Liner) txnColumns(b *strings.Builder, mi *writepathv1.MergedInterval) {
	secs, c := mi.GetSeconds(), mi.GetCounters()
	if r, ok := mi.GetGauges()["round"]; ok {
		fmt.Fprintf(b, " round %d ", r)
	}
	if n, ok := mi.GetGauges()["threads"]; ok {
		fmt.Fprintf(b, " thds %d", n)
	}
	s := opStat(mi, TxnOp)
	fmt.Fprintf(b, " tps %8.1f", perSec(s.GetCount(), secs))
	if l.counters["writes"] || l.counters["other"] {
		fmt.Fprintf(b, " qps %8.1f (w/o %.1f/%.1f)", perSec(c["writes"]+c["other"], secs), perSec(c["writes"], secs), perSec(c["other"], secs))
	}
	p95 := latMs(s, 0)
	if s.GetCount() > 0 {
		if ns, err := intervalPercentile(mi, TxnOp, 95); err != nil {
			p95 = fmt.Sprintf("%6s", "?") // no figure rather than a wrong one
		} else {
			p95 = latMs(s, ns)
		}
	}
	fmt.Fprintf(b, "  lat p50 %s p95 %s p99 %s ms", latMs(s, s.GetP50()), p95, latMs(s, s.GetP99()))
	for _, k := range []struct{ counter, label string }{{"errors", "err/s"}, {"reconnects", "reconn/s"}, {"late", "late/s"}} {
		if l.counters[k.counter] && (k.counter != "late" || l.openLoop) {
			fmt.Fprintf(b, " %s %.1f", k.label, perSec(c[k.counter], secs))
		}
	}
}

// spanLabel is an interval's span since its phase started, in seconds:
// "2.0-3.0s"; a shorter (last) interval shows its real end, "3.0-3.004s".
func spanLabel(mi *writepathv1.MergedInterval, d time.Duration) string {
	from := time.Duration(mi.GetSeq()) * d
	span := time.Duration(mi.GetSeconds() * float64(time.Second))
	if span <= 0 {
		span = mi.GetEnd().AsTime().Sub(mi.GetStart().AsTime())
	}
	to := from + span
	if d > 0 && span < d*999/1000 {
		return fmt.Sprintf("%.1f-%.3fs", from.Seconds(), to.Seconds())
	}
	return fmt.Sprintf("%.1f-%.1fs", from.Seconds(), to.Seconds())
}

// opStat is op's stats in the interval (zero when it has none).
func opStat(mi *writepathv1.MergedInterval, op string) *writepathv1.OpStats {
	for _, s := range mi.GetStats() {
		if s.GetOp() == op {
			return s
		}
	}
	return &writepathv1.OpStats{Op: op}
}

// intervalPercentile reads a percentile the stats do not carry from the
// interval's merged histogram of op (0 when it has none); an error when
// the histogram does not decode.
func intervalPercentile(mi *writepathv1.MergedInterval, op string, p float64) (int64, error) {
	h, err := results.IntervalHistogram(mi, func(o string) bool { return o == op })
	if err != nil {
		return 0, err
	}
	return h.Percentile(p), nil
}

// latMs formats a latency in ms, or "-" when the interval has no sample.
func latMs(s *writepathv1.OpStats, ns int64) string {
	if s.GetCount() == 0 {
		return fmt.Sprintf("%6s", "-")
	}
	return fmt.Sprintf("%6.3f", ms(ns))
}

func perSec(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}
