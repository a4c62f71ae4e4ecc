package metrics_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/internal/fabrictest"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	"github.com/writepath/writepath/metrics"
)

// TestScrapeAfterRun runs synth on two workers and scrapes the exporter
// over HTTP: every metric is there with the values the run implies.
func TestScrapeAfterRun(t *testing.T) {
	f := fabrictest.Start(t, fabrictest.Options{Workers: 2})
	exp := metrics.New()
	exp.Attach(f.Coordinator())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.New(f.Control()).Run(ctx, fabrictest.SynthSpec(testkind.Spec{Ops: 100, Duration: 500 * time.Millisecond}), nil); err != nil {
		t.Fatal(err)
	}
	text := scrape(t, ctx, exp)
	for _, want := range []string{
		"writepath_workers_connected 2",
		`writepath_runs_ended_total{state="finished"} 1`,
		"writepath_merge_latency_seconds_bucket{le=\"+Inf\"}",
		"writepath_intervals_refused_total 0",
		"writepath_snapshots_dropped_total 0",
		"writepath_received_bytes_total 0", // no stats handler on the test fabric's server
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "writepath_intervals_merged_total 0") {
		t.Errorf("no interval merged:\n%s", text)
	}
}

func scrape(t *testing.T, ctx context.Context, exp *metrics.Exporter) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- exp.Serve(sctx, lis) }()
	defer func() { stop(); <-done }()
	res, err := http.Get("http://" + lis.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
