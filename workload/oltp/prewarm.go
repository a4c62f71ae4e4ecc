package oltp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/writepath/writepath/workload"
)

// Prewarm reads every table into the server's buffer pool as
// oltp_common.lua's cmd_prewarm does: per table (up to --threads tables
// at once) "Prewarming table sbtestN", ANALYZE TABLE, then a scan of the
// primary key and a scan of every row, with in-memory temporary tables.
func Prewarm(ctx context.Context, o Options, env workload.Env) error {
	if o.Threads > 1 {
		o.Text.Printf(LevelNotice, "Initializing worker threads...\n") // sysbench's parallel command
	}
	if o.DryRun {
		for n := 1; n <= o.Tables; n++ {
			o.Text.Print("Prewarming table sbtest%d", n)
		}
		return nil
	}
	if err := checkSSL(ctx, o.Conn); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(o.Threads, o.Tables) {
		wg.Go(func() {
			if err := prewarmTables(ctx, o, &next); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return ctx.Err()
}

// prewarmTables prewarms the tables it claims from next on one connection.
func prewarmTables(ctx context.Context, o Options, next *atomic.Int64) error {
	c, err := dial(ctx, o.Conn, true)
	if err != nil {
		return connectError(o.Conn, err)
	}
	stop := c.interruptOn(ctx)
	defer func() { stop(); c.close() }()
	// Do not create on-disk temporary tables for the scans below.
	for _, q := range []string{"SET tmp_table_size=2*1024*1024*1024", "SET max_heap_table_size=2*1024*1024*1024"} {
		if _, err := c.exec(q); err != nil {
			return fmt.Errorf("prewarm: %s: %w", q, err)
		}
	}
	for n := int(next.Add(1)); n <= o.Tables; n = int(next.Add(1)) {
		o.Text.Print("Prewarming table sbtest%d", n)
		for _, q := range prewarmSQL(n, o.TableSize) {
			if _, err := c.queryStrings(q); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if mysqlErrno(err) == erNoSuchTable {
					return tableError(o.Conn, fmt.Sprintf("sbtest%d", n), err)
				}
				return fmt.Errorf("prewarm sbtest%d: %s: %w", n, q, err)
			}
		}
	}
	return nil
}

// prewarmSQL is cmd_prewarm's statements for table n.
func prewarmSQL(n, size int) []string {
	return []string{
		fmt.Sprintf("ANALYZE TABLE sbtest%d", n),
		fmt.Sprintf("SELECT AVG(id) FROM (SELECT * FROM sbtest%d FORCE KEY (PRIMARY) LIMIT %d) t", n, size),
		fmt.Sprintf("SELECT COUNT(*) FROM (SELECT * FROM sbtest%d WHERE k LIKE '%%0%%' LIMIT %d) t", n, size),
	}
}
