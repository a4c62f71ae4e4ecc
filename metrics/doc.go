// Package metrics serves a coordinator's counters as Prometheus text
// metrics. It reads coordinator.Stats at scrape time and counts received
// bytes with a gRPC stats handler, so the coordinator itself knows no
// metrics library. Each Exporter has its own registry: nothing global.
package metrics
