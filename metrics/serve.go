package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Serve serves e's metrics at /metrics on lis until ctx ends.
func (e *Exporter) Serve(ctx context.Context, lis net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }() // owned: waited for below
	select {
	case err := <-errc:
		return fmt.Errorf("metrics %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(shut)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics %s: %w", lis.Addr(), err)
	}
	return nil
}
