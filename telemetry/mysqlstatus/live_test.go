package mysqlstatus

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// liveDSN is the server the live test samples: the MariaDB that this
// machine and CI run on 127.0.0.1:3306, unless WRITEPATH_MYSQL_DSN names
// another.
func liveDSN() string {
	if dsn := os.Getenv("WRITEPATH_MYSQL_DSN"); dsn != "" {
		return dsn
	}
	return "root@tcp(127.0.0.1:3306)/"
}

// TestLiveSample samples a real server twice around a few writes of its
// own, without assuming anything about the server's other content.
func TestLiveSample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", liveDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vars, err := ReadVariables(ctx, db)
	if err != nil {
		t.Fatalf("server %s: %v", liveDSN(), err)
	}
	if _, _, ok := vars.RedoCapacity(); !ok {
		t.Errorf("RedoCapacity() not ok; variables: %v", vars.Names())
	}
	s := NewSampler(db)
	first, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeSome(ctx, t, db)
	second, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Reset || second.Interval <= 0 || second.Log.LSN < first.Log.LSN || second.Total.OSLogWritten < first.Total.OSLogWritten {
		t.Errorf("samples: first %+v second %+v", first, second)
	}
	if second.Delta.OSLogWritten == 0 || second.Log.LSN == first.Log.LSN {
		t.Errorf("redo did not move over our writes: delta %+v, LSN %d -> %d", second.Delta, first.Log.LSN, second.Log.LSN)
	}
	if len(second.Missing) != 0 {
		t.Errorf("server lacks status variables %v", second.Missing)
	}
	t.Logf("mariadb=%v redo %d bytes over %v; checkpoint age %d", vars.MariaDB(), second.Delta.OSLogWritten, second.Interval, second.Log.CheckpointAge())
	if vars.MariaDB() {
		checkStatusLSNs(ctx, t, db)
	}
}

// checkStatusLSNs: MariaDB's Innodb_lsn_* status variables, which the
// sampler reads there, tell what SHOW ENGINE INNODB STATUS's LOG section
// tells, read around it (the LSNs only grow).
func checkStatusLSNs(ctx context.Context, t *testing.T, db *sql.DB) {
	t.Helper()
	read := func() LogStatus {
		m, err := showPairs(ctx, db, "SHOW GLOBAL STATUS", lsnVars)
		if err != nil {
			t.Fatal(err)
		}
		l, ok, err := statusLog(m)
		if err != nil || !ok {
			t.Fatalf("MariaDB without Innodb_lsn_* status: %v %v (%v)", ok, err, m)
		}
		return l
	}
	before := read()
	eng, err := engineLog(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	after := read()
	between := func(name string, lo, v, hi uint64) {
		if v < lo || v > hi {
			t.Errorf("%s: engine status %d, status variables %d then %d", name, v, lo, hi)
		}
	}
	between("LSN", before.LSN, eng.LSN, after.LSN)
	between("flushed to", before.FlushedTo, eng.FlushedTo, after.FlushedTo)
	between("last checkpoint", before.LastCheckpoint, eng.LastCheckpoint, after.LastCheckpoint)
}

// writeSome commits a few rows in a scratch schema of its own.
func writeSome(ctx context.Context, t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS writepath_telemetry_test",
		"CREATE TABLE IF NOT EXISTS writepath_telemetry_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB",
		"INSERT INTO writepath_telemetry_test.t (v) VALUES (REPEAT('x', 100)), (REPEAT('y', 100))",
		"DROP DATABASE writepath_telemetry_test",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
