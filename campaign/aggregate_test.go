package campaign

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
)

// intervals builds one run: interval k covers [k s, k+1 s) and holds ops[k]
// operations, each of latency lat[k] ns.
func intervals(ops []int64, lat []int64) []Interval {
	out := make([]Interval, len(ops))
	for k := range ops {
		h := hist.New()
		h.RecordN(lat[k], ops[k])
		out[k] = Interval{Start: time.Duration(k) * time.Second, End: time.Duration(k+1) * time.Second, Ops: ops[k], Latency: h}
	}
	return out
}

func TestWindowStat(t *testing.T) {
	// A warm-up second with a stall, then steady state.
	ivs := intervals([]int64{10, 100, 100, 100, 50}, []int64{9e9, 1e6, 1e6, 2e6, 1e6})
	tests := []struct {
		w        Window
		wantTP   float64
		wantP99  int64
		wantSpan time.Duration
	}{
		{Window{From: time.Second, To: 4 * time.Second}, 100, 2e6, 3 * time.Second},
		{Window{From: time.Second}, 87.5, 2e6, 4 * time.Second},
		{Window{}, 72, 9e9, 5 * time.Second},
	}
	for _, tt := range tests {
		s, err := tt.w.Stat(ivs)
		if err != nil {
			t.Fatalf("%v.Stat() error: %v", tt.w, err)
		}
		h := hist.New()
		if s.Throughput != tt.wantTP || !h.Equivalent(s.P99, tt.wantP99) || s.Span != tt.wantSpan {
			t.Errorf("%v.Stat() = %.1f ops/s p99 %d span %s; want %.1f, %d, %s", tt.w, s.Throughput, s.P99, s.Span, tt.wantTP, tt.wantP99, tt.wantSpan)
		}
	}
	if _, err := (Window{From: time.Minute}).Stat(ivs); !errors.Is(err, ErrEmptyWindow) {
		t.Errorf("Stat() past the end: err = %v; want ErrEmptyWindow", err)
	}
}

func TestAggregateAndTable(t *testing.T) {
	s, err := Parse("t.yaml", []byte("name: t\nworkload: oltp\nmatrix: {m: [a, b]}\ngroups: {g1: d=1, g2: d=2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	stats := map[Key][]RoundStat{
		{"m=a", "g1"}: {{Throughput: 100, P99: 5}, {Throughput: 300, P99: 1}, {Throughput: 200, P99: 3}},
		{"m=b", "g1"}: {{Throughput: 150, P99: 2}, {Throughput: 250, P99: 4}},
		{"m=a", "g2"}: {{Throughput: 1000, P99: 7}},
	}
	tab := s.BuildTable(stats)
	a := tab.Rows[0].Aggs[0]
	if a.Rounds != 3 || a.Throughput != 200 || a.ThroughputMin != 100 || a.ThroughputMax != 300 || a.P99 != 3 || a.DeltaPct != 0 {
		t.Errorf("m=a on g1 = %+v; want median 200 (100..300), p99 3, delta 0", a)
	}
	b := tab.Rows[1].Aggs[0]
	if b.Throughput != 200 || b.P99 != 3 || math.Abs(b.DeltaPct) > 1e-9 {
		t.Errorf("m=b on g1 = %+v; want median 200 of two rounds, p99 3, delta 0%%", b)
	}
	if tab.Rows[1].Aggs[1].Rounds != 0 || tab.Rows[0].Aggs[1].Throughput != 1000 {
		t.Errorf("g2 column = %+v / %+v; want 1000 then an empty cell", tab.Rows[0].Aggs[1], tab.Rows[1].Aggs[1])
	}
	if tab.Baseline != "m=a" || len(tab.Groups) != 2 {
		t.Errorf("table baseline %q groups %v", tab.Baseline, tab.Groups)
	}
}

// TestDeviceP99: the window's device write latencies merge like the
// workload's; rounds without them do not count in the median.
func TestDeviceP99(t *testing.T) {
	ivs := intervals([]int64{100, 100}, []int64{1e6, 1e6})
	for i, v := range []int64{200_000, 5_000_000} {
		h := hist.New()
		h.RecordN(v, 100)
		ivs[i].DeviceWrite = h
	}
	s, err := (Window{}).Stat(ivs)
	if err != nil || !hist.New().Equivalent(s.DeviceP99, 5_000_000) {
		t.Errorf("Stat().DeviceP99 = %d, %v; want 5 ms", s.DeviceP99, err)
	}
	a := Aggregate([]RoundStat{{DeviceP99: 1e6}, {DeviceP99: 3e6}, {}})
	if a.DeviceP99 != 2e6 {
		t.Errorf("Aggregate DeviceP99 = %d; want the median of the traced rounds, 2e6", a.DeviceP99)
	}
	if a := Aggregate([]RoundStat{{P99: 1}}); a.DeviceP99 != 0 {
		t.Errorf("untraced Aggregate DeviceP99 = %d; want 0", a.DeviceP99)
	}
}

// TestFiguresAndKindStats: a kind's figures combine every sample of a
// cell's rounds (median, range, sum) with a delta against the baseline's
// median; the window also yields p95, MB/s and the syncs' p99.
func TestFiguresAndKindStats(t *testing.T) {
	s, err := Parse("t.yaml", []byte("name: t\nworkload: crash\nmatrix: {m: [a, b]}\ngroups: {g: d=1}\ncolumns: [w/s]\n"))
	if err != nil {
		t.Fatal(err)
	}
	stats := map[Key][]RoundStat{
		{"m=a", "g"}: {{Figures: map[string][]float64{FigRecoveryMS: {100, 300}, FigLost: {0, 0}}}, {Figures: map[string][]float64{FigRecoveryMS: {200}, FigLost: {0}}}},
		{"m=b", "g"}: {{Figures: map[string][]float64{FigRecoveryMS: {50}, FigLost: {2}}}},
	}
	tab := s.BuildTable(stats)
	if tab.Kind != "crash" || len(tab.Columns) != 1 || tab.Columns[0].Key != "w/s" {
		t.Errorf("table kind %q columns %v", tab.Kind, tab.Columns)
	}
	a := tab.Rows[0].Aggs[0].Figures[FigRecoveryMS]
	if a.Median != 200 || a.Min != 100 || a.Max != 300 || a.N != 3 || a.DeltaPct != 0 {
		t.Errorf("m=a recovery = %+v; want 200 (100-300) over 3 samples", a)
	}
	b := tab.Rows[1].Aggs[0].Figures
	if b[FigRecoveryMS].DeltaPct != -75 || b[FigLost].Sum != 2 {
		t.Errorf("m=b = %+v; want recovery -75%%, lost 2", b)
	}

	ivs := intervals([]int64{100, 100}, []int64{1e6, 3e6})
	for i := range ivs {
		ivs[i].Bytes = 4096 * 100
		h := hist.New()
		h.RecordN(int64(i+1)*5e6, 10)
		ivs[i].Sync = h
	}
	st, err := (Window{}).Stat(ivs)
	if err != nil {
		t.Fatal(err)
	}
	h := hist.New()
	if math.Abs(st.MBps-0.4096) > 1e-9 || !h.Equivalent(st.SyncP99, 10e6) || !h.Equivalent(st.P95, 3e6) {
		t.Errorf("Stat() MB/s %.4f sync p99 %d p95 %d; want 0.4096, 10 ms, 3 ms", st.MBps, st.SyncP99, st.P95)
	}
	if agg := Aggregate([]RoundStat{st, {P99: 1}}); agg.SyncP99 != st.SyncP99 {
		t.Errorf("Aggregate SyncP99 = %d; want the synced round's %d", agg.SyncP99, st.SyncP99)
	}
}
