package oltp

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/writepath/writepath/telemetry/mysqlstatus"
	"github.com/writepath/writepath/workload"
)

// statusPeriod is how often the run phase reads the server's InnoDB
// status. One SHOW GLOBAL STATUS and one SHOW ENGINE INNODB STATUS a second
// on their own connection cost the server well under a millisecond.
const statusPeriod = time.Second

// startStatus samples the server's InnoDB counters (telemetry/mysqlstatus)
// every statusPeriod on a connection of its own until stop is called, and
// sets them as the Recorder's "innodb.*" gauges, so they ride on every
// interval: counters as their increase over the last sample
// ("innodb.log_waits"), the rest as values ("innodb.pages_dirty",
// "innodb.checkpoint_age_bytes"). A failing sample (no PROCESS privilege,
// a restarting server) leaves the gauges as they were: telemetry never
// fails a run.
func startStatus(ctx context.Context, c ConnOptions, rec *workload.Recorder) (stop func()) {
	connector, err := mysql.NewConnector(mysqlConfig(c, false))
	if err != nil {
		return func() {}
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { sampleStatus(ctx, mysqlstatus.NewSampler(db), rec) })
	return func() { cancel(); wg.Wait(); db.Close() }
}

func sampleStatus(ctx context.Context, s *mysqlstatus.Sampler, rec *workload.Recorder) {
	t := time.NewTicker(statusPeriod)
	defer t.Stop()
	gauges := map[string]*workload.Gauge{}
	for {
		qctx, cancel := context.WithTimeout(ctx, statusPeriod)
		smp, err := s.Sample(qctx)
		cancel()
		if err == nil {
			for _, m := range smp.Metrics() {
				g := gauges[m.Name]
				if g == nil {
					g = rec.Gauge(m.Name)
					gauges[m.Name] = g
				}
				g.Set(m.Value)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
