package metrics

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/stats"

	"github.com/writepath/writepath/coordinator"
)

// Exporter collects a coordinator's metrics. Attach the coordinator once it
// exists; until then only the byte counter is reported.
type Exporter struct {
	coord    atomic.Pointer[coordinator.Coordinator]
	received atomic.Uint64 // wire bytes of messages received over gRPC
	registry *prometheus.Registry
}

var (
	descWorkers   = prometheus.NewDesc("writepath_workers_connected", "Workers with a live session.", nil, nil)
	descRuns      = prometheus.NewDesc("writepath_runs", "Runs in flight, by state.", []string{"state"}, nil)
	descEnded     = prometheus.NewDesc("writepath_runs_ended_total", "Runs ended since the coordinator started, by final state.", []string{"state"}, nil)
	descMerged    = prometheus.NewDesc("writepath_intervals_merged_total", "Merged intervals published.", nil, nil)
	descRefused   = prometheus.NewDesc("writepath_intervals_refused_total", "Worker intervals refused by validation.", nil, nil)
	descEvicted   = prometheus.NewDesc("writepath_workers_evicted_total", "Worker sessions ended for malformed or out-of-order input.", nil, nil)
	descDropped   = prometheus.NewDesc("writepath_snapshots_dropped_total", "Per-worker snapshots merged but not stored: the store was MaxQueuedSnapshots behind.", nil, nil)
	descLatency   = prometheus.NewDesc("writepath_merge_latency_seconds", "Time from an interval's end to its merged publication.", nil, nil)
	descBytesRecv = prometheus.NewDesc("writepath_received_bytes_total", "Bytes of gRPC messages received (wire length).", nil, nil)
)

// New returns an Exporter with its own registry.
func New() *Exporter {
	e := &Exporter{registry: prometheus.NewRegistry()}
	e.registry.MustRegister(e) // a fresh registry: no duplicate is possible
	return e
}

// Attach makes e report c's stats.
func (e *Exporter) Attach(c *coordinator.Coordinator) { e.coord.Store(c) }

// Registry is e's registry, for an HTTP handler or a test's Gather.
func (e *Exporter) Registry() *prometheus.Registry { return e.registry }

// Describe implements prometheus.Collector.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWorkers, descRuns, descEnded, descMerged, descRefused, descEvicted, descDropped, descLatency, descBytesRecv} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one Stats snapshot per scrape.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descBytesRecv, prometheus.CounterValue, float64(e.received.Load()))
	c := e.coord.Load()
	if c == nil {
		return
	}
	st := c.Stats()
	ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(st.WorkersConnected))
	for state, n := range st.RunsInFlight {
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, float64(n), state)
	}
	for state, n := range st.RunsEnded {
		ch <- prometheus.MustNewConstMetric(descEnded, prometheus.CounterValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(descMerged, prometheus.CounterValue, float64(st.IntervalsMerged))
	ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(st.IntervalsRefused))
	ch <- prometheus.MustNewConstMetric(descEvicted, prometheus.CounterValue, float64(st.WorkersEvicted))
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(st.SnapshotsDropped))
	ch <- latency(st.MergeLatency)
}

func latency(h coordinator.LatencyHistogram) prometheus.Metric {
	buckets := make(map[float64]uint64, len(coordinator.MergeLatencyBounds))
	for i, b := range coordinator.MergeLatencyBounds {
		if i < len(h.Counts) {
			buckets[b] = h.Counts[i]
		}
	}
	return prometheus.MustNewConstHistogram(descLatency, h.Count, h.Sum, buckets)
}

// StatsHandler returns a gRPC server stats handler that counts received
// bytes into e; pass it with grpc.StatsHandler.
func (e *Exporter) StatsHandler() stats.Handler { return byteCounter{e} }

// byteCounter counts the wire length of every received message.
type byteCounter struct{ e *Exporter }

var _ stats.Handler = byteCounter{}

func (b byteCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (b byteCounter) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InPayload); ok {
		b.e.received.Add(uint64(in.WireLength))
	}
}

func (b byteCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (b byteCounter) HandleConn(context.Context, stats.ConnStats) {}
