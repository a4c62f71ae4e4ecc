package oltp

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/writepath/writepath/hist"
)

// IntervalLine is sysbench's intermediate report of one interval: elapsed
// seconds since the start, threads, and per second over secs: events,
// queries (read/write/other), the percentile's latency in ms, ignored
// errors and reconnects.
//
//	[ 10s ] thds: 64 tps: 812.30 qps: 4873.80 (r/w/o: 0.00/3249.20/1624.60) lat (ms,95%): 101.13 err/s: 0.00 reconn/s: 0.00
func IntervalLine(elapsed, secs float64, threads int, c Counts64, pct int, latMs float64) string {
	per := func(n int64) float64 { return float64(n) / math.Max(secs, 1e-9) }
	return fmt.Sprintf("[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%d%%): %4.2f err/s: %4.2f reconn/s: %4.2f",
		elapsed, threads, per(c.Transactions), per(c.Reads+c.Writes+c.Other), per(c.Reads), per(c.Writes), per(c.Other),
		pct, latMs, per(c.Errors), per(c.Reconnects))
}

// Counts64 are sysbench's counters over a span.
type Counts64 struct {
	Transactions, Reads, Writes, Other, Errors, Reconnects int64
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// Summary is the statistics of one worker's run (or of a checkpoint), in
// sysbench's sections. Latencies are milliseconds.
type Summary struct {
	Threads int    `json:"threads"`
	Seed    uint64 `json:"rand_seed"`
	// TotalTimeSec is the time since the start (after the warm-up);
	// IntervalSec is the span the counts cover: since the last checkpoint.
	TotalTimeSec  float64 `json:"total_time_s"`
	IntervalSec   float64 `json:"interval_s"`
	Transactions  int64   `json:"transactions"`
	Reads         int64   `json:"reads"`
	Writes        int64   `json:"writes"`
	Other         int64   `json:"other"`
	IgnoredErrors int64   `json:"ignored_errors"`
	Reconnects    int64   `json:"reconnects"`
	Percentile    float64 `json:"percentile"`
	Latency       Latency `json:"latency_ms"`
	// Uncorrected is the latency from each transaction's actual start
	// (rate mode only; Latency then counts from the intended start).
	Uncorrected *Latency `json:"latency_uncorrected_ms,omitempty"`
	// Rate is --rate; Late counts transactions that began more than 1 ms
	// after their intended start.
	Rate              float64 `json:"rate,omitempty"`
	Late              int64   `json:"late,omitempty"`
	EventsAvg         float64 `json:"events_avg"`
	EventsStddev      float64 `json:"events_stddev"`
	ExecTimeAvgSec    float64 `json:"exec_time_avg_s"`
	ExecTimeStddevSec float64 `json:"exec_time_stddev_s"`
	// PerThread is each thread's statistics (--debug prints them).
	PerThread []ThreadStat `json:"per_thread,omitempty"`
	// Unfinished counts transactions cut off by --forced-shutdown.
	Unfinished     int  `json:"unfinished,omitempty"`
	ForcedShutdown bool `json:"forced_shutdown,omitempty"`
	// Checkpoints are the --report-checkpoints reports, in order.
	Checkpoints []*Summary `json:"checkpoints,omitempty"`
	// CheckpointSec is when a checkpoint report was taken (seconds since
	// the start).
	CheckpointSec float64 `json:"checkpoint_s,omitempty"`

	// Queries are the statement execution times (--db-debug only).
	Queries *QueryStats `json:"queries,omitempty"`

	// hist is the latency histogram (for --histogram); local only.
	hist *hist.Histogram
}

// ThreadStat is one thread's events and latencies (ms; sum in seconds).
type ThreadStat struct {
	Events int64   `json:"events"`
	Min    float64 `json:"min_ms"`
	Avg    float64 `json:"avg_ms"`
	Max    float64 `json:"max_ms"`
	SumSec float64 `json:"sum_s"`
}

// Latency is one latency section.
type Latency struct {
	Min, Avg, Max, Pct, Sum float64
}

// Histogram returns the latency histogram the summary was made from (nil
// when decoded from JSON).
func (s *Summary) Histogram() *hist.Histogram { return s.hist }

func latencyOf(h *hist.Histogram, pct float64, sum time.Duration) Latency {
	l := Latency{Min: ms(h.Min()), Avg: h.Mean() / 1e6, Max: ms(h.Max()), Sum: float64(sum) / 1e6}
	if pct > 0 {
		l.Pct = ms(h.Percentile(pct))
	}
	return l
}

func meanStddev(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var m, v float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// stddevAround is the deviation of xs around m, which need not be their
// mean (sysbench's execution time after a forced shutdown).
func stddevAround(m float64, xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)))
}

// TPS is transactions per second over the measured time.
func (s *Summary) TPS() float64 { return float64(s.Transactions) / math.Max(s.span(), 1e-9) }

func (s *Summary) span() float64 {
	if s.IntervalSec > 0 {
		return s.IntervalSec
	}
	return s.TotalTimeSec
}

// JSON is the summary as JSON.
func (s *Summary) JSON() ([]byte, error) { return json.MarshalIndent(s, "", "  ") }

// Text renders the summary with sysbench 1.0.20's sections and layout, at
// the default verbosity and without the histogram.
func (s *Summary) Text() string {
	var b strings.Builder
	t := NewText(&b, Output{Verbosity: int(LevelNotice)})
	s.Report(t)
	return b.String()
}

// Report prints the summary as sysbench's report_cumulative does, on t
// with t's options: the histogram first (--histogram), the per-thread
// statistics (--debug), writepath's extra lines at info level.
func (s *Summary) Report(t *Text) {
	out := t.Output()
	if out.Histogram && s.hist != nil {
		t.Printf(LevelNotice, "Latency histogram (values are in milliseconds)")
		var b strings.Builder
		WriteHistogram(&b, s.hist)
		t.Log(Line{Level: LevelNotice, Text: strings.TrimSuffix(b.String(), "\n"), Raw: true})
		t.Printf(LevelNotice, " ")
	}
	per := func(n int64) float64 { return float64(n) / math.Max(s.span(), 1e-9) }
	q := s.Reads + s.Writes + s.Other
	n := func(format string, args ...any) {
		t.Log(Line{Level: LevelNotice, Text: fmt.Sprintf(format, args...), Stamped: true})
	}
	n("SQL statistics:")
	n("    queries performed:")
	n("        read:                            %d", s.Reads)
	n("        write:                           %d", s.Writes)
	n("        other:                           %d", s.Other)
	n("        total:                           %d", q)
	n("    transactions:                        %-6d (%.2f per sec.)", s.Transactions, per(s.Transactions))
	n("    queries:                             %-6d (%.2f per sec.)", q, per(q))
	n("    ignored errors:                      %-6d (%.2f per sec.)", s.IgnoredErrors, per(s.IgnoredErrors))
	n("    reconnects:                          %-6d (%.2f per sec.)", s.Reconnects, per(s.Reconnects))
	if s.Queries != nil {
		s.Queries.report(t)
	}
	info := func(format string, args ...any) {
		t.Log(Line{Level: LevelNote, Text: fmt.Sprintf(format, args...), Stamped: true})
	}
	if s.Rate > 0 {
		info("    late transactions:                   %-6d (schedule --rate=%g fell behind by > 1 ms)", s.Late, s.Rate)
	}
	if s.ForcedShutdown && s.Unfinished > 0 {
		n("")
		n("Number of unfinished transactions on forced shutdown: %d", s.Unfinished)
	}
	n("")
	n("General statistics:")
	n("    total time:                          %.4fs", s.TotalTimeSec)
	n("    total number of events:              %d", s.Transactions)
	info("    random seed (--rand-seed):           %d", s.Seed)
	n("")
	latencySection(n, "Latency (ms):", s.Latency, s.Percentile)
	if s.Uncorrected != nil {
		latencySection(info, "Latency from actual start, not corrected for coordinated omission (ms):", *s.Uncorrected, s.Percentile)
	}
	n("Threads fairness:")
	n("    events (avg/stddev):           %.4f/%3.2f", s.EventsAvg, s.EventsStddev)
	n("    execution time (avg/stddev):   %.4f/%3.2f", s.ExecTimeAvgSec, s.ExecTimeStddevSec)
	n("")
	if out.Debug {
		t.Log(Line{Level: LevelDebug, Text: "Verbose per-thread statistics:\n", Stamped: true})
		for i, th := range s.PerThread {
			t.Log(Line{Level: LevelDebug, Stamped: true, Text: fmt.Sprintf("    thread #%3d: min: %.4fs  avg: %.4fs  max: %.4fs  events: %d",
				i, th.Min/1e3, th.Avg/1e3, th.Max/1e3, th.Events)})
			t.Log(Line{Level: LevelDebug, Stamped: true, Text: fmt.Sprintf("                 total time taken by event execution: %.4fs", th.SumSec)})
		}
		n("")
	}
}

func latencySection(n func(string, ...any), title string, l Latency, pct float64) {
	n("%s", title)
	n("         min: %39.2f", l.Min)
	n("         avg: %39.2f", l.Avg)
	n("         max: %39.2f", l.Max)
	if pct > 0 {
		n("        %3dth percentile: %27.2f", int(pct), l.Pct)
	} else {
		n("         percentile stats:               disabled")
	}
	n("         sum: %39.2f", l.Sum)
	n("")
}

// sysbench's latency histogram: 1024 buckets, logarithmic from 0.001 to
// 100,000 ms (sb_logger.c, sb_histogram.c).
const (
	sbBuckets = 1024
	sbMinMs   = 1e-3
	sbMaxMs   = 1e5
)

var (
	sbDeduct = math.Log(sbMinMs)
	sbMult   = (sbBuckets - 1) / (math.Log(sbMaxMs) - sbDeduct)
)

// sbBucket is the bucket of a value in ms.
func sbBucket(v float64) int {
	if v <= 0 {
		return 0
	}
	i := int(math.Floor((math.Log(v)-sbDeduct)*sbMult + 0.5))
	return min(max(i, 0), sbBuckets-1)
}

// WriteHistogram prints h as sysbench's --histogram does: its buckets,
// each with the bucket's value in ms, a bar scaled to the fullest
// bucket and the count. h's values fall into sysbench's buckets by value
// (h's buckets are narrower: 0.1% against sysbench's 1.8%).
func WriteHistogram(w io.Writer, h *hist.Histogram) {
	var counts [sbBuckets]int64
	for _, bar := range h.Buckets() {
		counts[sbBucket(ms((bar.From+bar.To)/2))] += bar.Count
	}
	var most int64
	for _, c := range counts {
		most = max(most, c)
	}
	if most == 0 {
		return
	}
	fmt.Fprintln(w, "       value  ------------- distribution ------------- count")
	const stars = "****************************************"
	for i, c := range counts {
		if c == 0 {
			continue
		}
		width := int(math.Floor(float64(c)*40/float64(most) + 0.5))
		fmt.Fprintf(w, "%12.3f |%-40s %d\n", math.Exp(float64(i)/sbMult+sbDeduct), stars[:width], c)
	}
}

// QueueLine is sysbench's second intermediate line in --rate mode.
func QueueLine(elapsed float64, queue, concurrency int64) string {
	return fmt.Sprintf("[ %.0fs ] queue length: %d, concurrency: %d", elapsed, queue, concurrency)
}

// CheckpointLine heads a --report-checkpoints report.
func CheckpointLine(elapsed float64) string {
	return fmt.Sprintf("[ %.0fs ] Checkpoint report:", elapsed)
}
