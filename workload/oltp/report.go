package oltp

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
)

// reporter prints sysbench's interval lines on env.Progress every
// --report-interval until the returned stop is called:
//
//	[ 10s ] thds: 64 tps: 812.30 qps: 4873.80 (r/w/o: 0.00/3249.20/1624.60) lat (ms,95%): 101.13 err/s: 0.00 reconn/s: 0.00
func (s *runState) reporter(env workload.Env) (stop func()) {
	if env.Progress == nil || s.o.ReportInterval <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.o.ReportInterval)
		defer t.Stop()
		var last countSnap
		h := hist.New()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				last = s.intervalLine(env.Progress, now, last, h)
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

func (s *runState) intervalLine(w io.Writer, now time.Time, last countSnap, h *hist.Histogram) countSnap {
	h.Reset()
	var cur countSnap
	for _, t := range s.threads {
		t.st.takeInterval(h)
		c := t.counts
		cur.trx += c.Transactions.Load()
		cur.writes += c.Writes.Load()
		cur.other += c.Other.Load()
		cur.errors += c.Errors.Load()
		cur.reconnects += c.Reconnects.Load()
	}
	sec := s.o.ReportInterval.Seconds()
	per := func(a, b int64) float64 { return float64(a-b) / sec }
	pct := s.o.Percentile
	if pct == 0 {
		pct = 100
	}
	fmt.Fprintf(w, "[ %ds ] thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,%g%%): %.2f err/s: %.2f reconn/s: %.2f\n",
		int(math.Round(now.Sub(s.start).Seconds())), len(s.threads), per(cur.trx, last.trx),
		per(cur.writes+cur.other, last.writes+last.other), 0.0, per(cur.writes, last.writes), per(cur.other, last.other),
		pct, ms(h.Percentile(pct)), per(cur.errors, last.errors), per(cur.reconnects, last.reconnects))
	return cur
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// Summary is the end-of-run statistics of one worker, in sysbench's
// sections. Latencies are milliseconds.
type Summary struct {
	Threads       int     `json:"threads"`
	Seed          uint64  `json:"rand_seed"`
	TotalTimeSec  float64 `json:"total_time_s"`
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
}

// Latency is one latency section.
type Latency struct {
	Min, Avg, Max, Pct, Sum float64
}

func latencyOf(h *hist.Histogram, pct float64, sum time.Duration) Latency {
	return Latency{Min: ms(h.Min()), Avg: h.Mean() / 1e6, Max: ms(h.Max()), Pct: ms(h.Percentile(pct)),
		Sum: float64(sum) / 1e6}
}

// summary gathers the threads' statistics at the end of the run.
func (s *runState) summary(end time.Time) *Summary {
	sum := &Summary{Threads: len(s.threads), Seed: s.o.Rand.Seed, Percentile: s.o.Percentile, Rate: s.o.Rate, Late: s.late.Load()}
	from := s.start
	if s.o.Warmup > 0 && end.After(s.warmEnd) {
		from = s.warmEnd
	}
	sum.TotalTimeSec = end.Sub(from).Seconds()
	total, uncorr := hist.New(), hist.New()
	var busy time.Duration
	var events, execs []float64
	for _, t := range s.threads {
		c := t.counts
		sum.Transactions += c.Transactions.Load() - t.base.trx
		sum.Writes += c.Writes.Load() - t.base.writes
		sum.Other += c.Other.Load() - t.base.other
		sum.IgnoredErrors += c.Errors.Load() - t.base.errors
		sum.Reconnects += c.Reconnects.Load() - t.base.reconnects
		t.st.mu.Lock()
		_ = total.Merge(t.st.mu.total)
		_ = uncorr.Merge(t.st.mu.uncorr)
		busy += t.st.mu.busy
		events = append(events, float64(t.st.mu.events))
		execs = append(execs, t.st.mu.busy.Seconds())
		t.st.mu.Unlock()
	}
	pct := s.o.Percentile
	if pct == 0 {
		pct = 100
	}
	sum.Latency = latencyOf(total, pct, busy)
	if s.pacer != nil {
		u := latencyOf(uncorr, pct, busy)
		sum.Uncorrected = &u
	}
	sum.EventsAvg, sum.EventsStddev = meanStddev(events)
	sum.ExecTimeAvgSec, sum.ExecTimeStddevSec = meanStddev(execs)
	return sum
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

// TPS is transactions per second over the measured time.
func (s *Summary) TPS() float64 { return float64(s.Transactions) / math.Max(s.TotalTimeSec, 1e-9) }

// JSON is the summary as JSON.
func (s *Summary) JSON() ([]byte, error) { return json.MarshalIndent(s, "", "  ") }

// Text renders the summary with sysbench 1.0.20's sections and layout.
func (s *Summary) Text() string {
	var b strings.Builder
	per := func(n int64) float64 { return float64(n) / math.Max(s.TotalTimeSec, 1e-9) }
	q := s.Reads + s.Writes + s.Other
	fmt.Fprintf(&b, "SQL statistics:\n    queries performed:\n")
	fmt.Fprintf(&b, "        read:                            %d\n", s.Reads)
	fmt.Fprintf(&b, "        write:                           %d\n", s.Writes)
	fmt.Fprintf(&b, "        other:                           %d\n", s.Other)
	fmt.Fprintf(&b, "        total:                           %d\n", q)
	fmt.Fprintf(&b, "    transactions:                        %-6d (%.2f per sec.)\n", s.Transactions, per(s.Transactions))
	fmt.Fprintf(&b, "    queries:                             %-6d (%.2f per sec.)\n", q, per(q))
	fmt.Fprintf(&b, "    ignored errors:                      %-6d (%.2f per sec.)\n", s.IgnoredErrors, per(s.IgnoredErrors))
	fmt.Fprintf(&b, "    reconnects:                          %-6d (%.2f per sec.)\n", s.Reconnects, per(s.Reconnects))
	if s.Rate > 0 {
		fmt.Fprintf(&b, "    late transactions:                   %-6d (schedule --rate=%g fell behind by > 1 ms)\n", s.Late, s.Rate)
	}
	fmt.Fprintf(&b, "\nGeneral statistics:\n")
	fmt.Fprintf(&b, "    total time:                          %.4fs\n", s.TotalTimeSec)
	fmt.Fprintf(&b, "    total number of events:              %d\n", s.Transactions)
	fmt.Fprintf(&b, "    random seed (--rand-seed):           %d\n", s.Seed)
	writeLatency(&b, "Latency (ms):", s.Latency, s.Percentile)
	if s.Uncorrected != nil {
		writeLatency(&b, "Latency from actual start, not corrected for coordinated omission (ms):", *s.Uncorrected, s.Percentile)
	}
	fmt.Fprintf(&b, "\nThreads fairness:\n")
	fmt.Fprintf(&b, "    events (avg/stddev):           %.4f/%3.2f\n", s.EventsAvg, s.EventsStddev)
	fmt.Fprintf(&b, "    execution time (avg/stddev):   %.4f/%3.2f\n", s.ExecTimeAvgSec, s.ExecTimeStddevSec)
	return b.String()
}

func writeLatency(b *strings.Builder, title string, l Latency, pct float64) {
	fmt.Fprintf(b, "\n%s\n", title)
	fmt.Fprintf(b, "         min:                                  %7.2f\n", l.Min)
	fmt.Fprintf(b, "         avg:                                  %7.2f\n", l.Avg)
	fmt.Fprintf(b, "         max:                                  %7.2f\n", l.Max)
	if pct > 0 {
		fmt.Fprintf(b, "         %gth percentile:                     %7.2f\n", pct, l.Pct)
	}
	fmt.Fprintf(b, "         sum:                                  %7.2f\n", l.Sum)
}
