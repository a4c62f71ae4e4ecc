package coordinator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// Bounds on what one worker's interval may carry. They are generous for any
// real kind and keep a hostile or broken worker from making the coordinator
// allocate without limit (histogram payloads are bounded by hist.Decode).
const (
	maxOps      = 64
	maxSeries   = 512 // counters, gauges, telemetry values, devices: each
	maxNameLen  = 128
	maxSeqAhead = 1 << 16 // seqs more than this past the merge point are refused
	// maxOpCount bounds one histogram's count: 2^40 (~10^12) operations in
	// one interval is beyond any host, and it keeps a merge of a million
	// workers' intervals below MaxInt64, so Accumulator.Add cannot fail
	// halfway through an interval's ops.
	maxOpCount = 1 << 40
)

// decodeInterval validates an incoming interval and decodes its histograms.
// It is the only way worker data enters the merge, so everything a peer
// controls is checked here.
// Histograms are decoded sparse: a coordinator merging a thousand workers
// must not build a dense histogram per worker. The result lives in dec's
// memory until the next call.
func decodeInterval(dec *hist.Decoder, iv *writepathv1.Interval) (map[string]*hist.Sparse, error) {
	if err := checkIntervalShape(iv); err != nil {
		return nil, err
	}
	dec.Reset()
	ops := make(map[string]*hist.Sparse, len(iv.GetOps()))
	for _, o := range iv.GetOps() {
		if err := checkName("op", o.GetOp()); err != nil {
			return nil, err
		}
		if _, dup := ops[o.GetOp()]; dup {
			return nil, fmt.Errorf("%w: op %s twice", ErrBadInterval, echo.Quote(o.GetOp()))
		}
		h, err := dec.DecodeSparse(o.GetHdr())
		if err != nil {
			return nil, fmt.Errorf("%w: op %s: %w", ErrBadInterval, echo.Quote(o.GetOp()), err)
		}
		if h.Count() > maxOpCount {
			return nil, fmt.Errorf("%w: op %s: %d values in one interval, limit %d", ErrBadInterval, echo.Quote(o.GetOp()), h.Count(), int64(maxOpCount))
		}
		ops[o.GetOp()] = h
	}
	return ops, nil
}

func checkIntervalShape(iv *writepathv1.Interval) error {
	if iv == nil {
		return fmt.Errorf("%w: empty", ErrBadInterval)
	}
	start, end := iv.GetStart(), iv.GetEnd()
	if start.CheckValid() != nil || end.CheckValid() != nil || end.AsTime().Before(start.AsTime()) {
		return fmt.Errorf("%w: seq %d: bad start/end", ErrBadInterval, iv.GetSeq())
	}
	if len(iv.GetOps()) > maxOps {
		return fmt.Errorf("%w: %d ops, limit %d", ErrBadInterval, len(iv.GetOps()), maxOps)
	}
	// An array, not a map literal: this runs once per worker per interval.
	for _, c := range [...]struct {
		what string
		n    int
	}{
		{"counters", len(iv.GetCounters())}, {"gauges", len(iv.GetGauges())},
		{"devices", len(iv.GetTelemetry().GetDevices())}, {"telemetry values", len(iv.GetTelemetry().GetValues())},
	} {
		if c.n > maxSeries {
			return fmt.Errorf("%w: %d %s, limit %d", ErrBadInterval, c.n, c.what, maxSeries)
		}
	}
	for name, v := range iv.GetCounters() {
		if err := checkName("counter", name); err != nil {
			return err
		}
		if v < 0 {
			return fmt.Errorf("%w: counter %s decreased by %d", ErrBadInterval, echo.Quote(name), -v)
		}
	}
	for name := range iv.GetGauges() {
		if err := checkName("gauge", name); err != nil {
			return err
		}
	}
	return checkTelemetryNames(iv.GetTelemetry())
}

// checkTelemetryNames checks the names a worker's telemetry carries (they
// are printed and stored as given).
func checkTelemetryNames(t *writepathv1.Telemetry) error {
	for _, d := range t.GetDevices() {
		if err := checkName("device", d.GetDevice()); err != nil {
			return err
		}
	}
	for name := range t.GetValues() {
		if err := checkName("telemetry value", name); err != nil {
			return err
		}
	}
	return nil
}

func checkName(what, name string) error {
	if name == "" || len(name) > maxNameLen || strings.ContainsFunc(name, isControl) {
		return fmt.Errorf("%w: %s name %s", ErrBadInterval, what, echo.Quote(name))
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// opStats computes the headline numbers of one merged histogram.
func opStats(op string, h *hist.Histogram) *writepathv1.OpStats {
	ps := h.Percentiles([]float64{50, 90, 99, 99.9})
	return &writepathv1.OpStats{
		Op: op, Count: h.Count(), Min: h.Min(), Max: h.Max(), Mean: h.Mean(),
		P50: ps[0], P90: ps[1], P99: ps[2], P999: ps[3],
	}
}

// encodeOps encodes merged histograms in op order, with their stats.
func encodeOps(accs map[string]*hist.Accumulator) ([]*writepathv1.OpHistogram, []*writepathv1.OpStats, error) {
	ops := make(map[string]*hist.Histogram, len(accs))
	for n, a := range accs {
		ops[n] = a.Histogram()
	}
	names := make([]string, 0, len(ops))
	for n := range ops {
		names = append(names, n)
	}
	sort.Strings(names)
	hs := make([]*writepathv1.OpHistogram, 0, len(names))
	stats := make([]*writepathv1.OpStats, 0, len(names))
	for _, n := range names {
		b, err := ops[n].Encode()
		if err != nil {
			return nil, nil, fmt.Errorf("op %s: %w", n, err)
		}
		hs = append(hs, &writepathv1.OpHistogram{Op: n, Hdr: b})
		stats = append(stats, opStats(n, ops[n]))
	}
	return hs, stats, nil
}
