package crash

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/writepath/writepath/mysqld"
)

// probeTable holds the single row the post-restart probe commits: a
// write of its own, so that the first COMMIT touches neither the ledger
// nor the sbtest tables.
const probeTable = "wp_probe"

const probeDDL = "CREATE TABLE IF NOT EXISTS " + probeTable +
	" (id INT NOT NULL PRIMARY KEY, at BIGINT NOT NULL) ENGINE=InnoDB"

// probeEvery is the probe's retry period: the resolution of the first
// query and first commit on the timeline.
const probeEvery = 10 * time.Millisecond

// openDB opens a database/sql pool on the managed server's socket as root,
// with its password.
func openDB(inst *mysqld.Instance, db string) (*sql.DB, error) {
	socket := inst.Socket()
	pw, err := inst.Password()
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = inst.User(), pw, "unix", socket, db
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, time.Minute, time.Minute
	// Broken pipes after the kill are expected; the driver would print
	// each one to stderr.
	cfg.Logger = &mysql.NopLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql config for %s: %w", socket, err)
	}
	return sql.OpenDB(connector), nil
}

// probeResult is when the restarted server first answered.
type probeResult struct {
	firstQuery, firstCommit time.Time
	err                     error
}

// probe retries, from before the server process exists, a query and then
// a committed write, and returns when each first succeeded. It gives up
// when ctx ends (the start failed or timed out).
func probe(ctx context.Context, db *sql.DB) probeResult {
	var r probeResult
	r.firstQuery, r.err = retry(ctx, func(ctx context.Context) error {
		var one int
		return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	})
	if r.err != nil {
		return r
	}
	r.firstCommit, r.err = retry(ctx, func(ctx context.Context) error { return commitProbe(ctx, db) })
	return r
}

// retry runs f every probeEvery until it succeeds, returning the moment
// it did.
func retry(ctx context.Context, f func(context.Context) error) (time.Time, error) {
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := f(actx)
		cancel()
		if err == nil {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("probe the restarted server: %w (last error: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func commitProbe(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "REPLACE INTO "+probeTable+" (id, at) VALUES (1, ?)", time.Now().UnixNano()); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
