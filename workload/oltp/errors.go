package oltp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Sentinel errors for the problems a user can fix, tested with errors.Is.
// Their messages are completed with where and what to do.
var (
	// ErrUnreachable: no server answers at the configured address.
	ErrUnreachable = errors.New("cannot connect to the MySQL server")
	// ErrAccessDenied: the server refused the user or password.
	ErrAccessDenied = errors.New("access denied")
	// ErrNoDatabase: --mysql-db names a database that does not exist.
	ErrNoDatabase = errors.New("database does not exist")
	// ErrNoTable: a sbtest table is missing (prepare was not run).
	ErrNoTable = errors.New("table does not exist")
	// ErrTableExists: prepare found a table from an earlier prepare.
	ErrTableExists = errors.New("table already exists")
)

// MySQL error numbers the workload tells apart.
const (
	erAccessDenied    = 1045
	erBadDB           = 1049
	erTableExists     = 1050
	erNoSuchTable     = 1146
	erTooManyPrepared = 1461
	erUnsupportedPS   = 1295
	erDBAccessDenied  = 1044
	erServerShutdown  = 1053
	erConnKilled      = 1927 // MariaDB: connection was killed
	erClientIdle      = 4031 // MySQL: disconnected for inactivity
)

// mysqlErrno returns the server error number of err, 0 if it is not a
// server error (then it is a connection problem).
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// connectError turns a failed first connection into one actionable line.
func connectError(c ConnOptions, err error) error {
	where := c.where()
	switch mysqlErrno(err) {
	case erAccessDenied, erDBAccessDenied:
		return fmt.Errorf("%w for user %q at %s: check --mysql-user and --mysql-password (%v)", ErrAccessDenied, c.User, where, err)
	case erBadDB:
		return fmt.Errorf("%w: %q at %s: create it (CREATE DATABASE %s) or pass --mysql-db", ErrNoDatabase, c.DB, where, c.DB)
	case 0:
		return fmt.Errorf("%w at %s: %v; is it running? check --mysql-socket, --mysql-host and --mysql-port", ErrUnreachable, where, err)
	}
	return fmt.Errorf("connect to %s: %w", where, err)
}

// tableError explains a missing table.
func tableError(c ConnOptions, table string, err error) error {
	return fmt.Errorf("%w: %s.%s at %s: run the prepare phase first with the same --tables and --table-size (%v)",
		ErrNoTable, c.DB, table, c.where(), err)
}

// where names the server for messages: the socket, else host:port.
func (c ConnOptions) where() string {
	if c.Socket != "" {
		return "socket " + c.Socket
	}
	return fmt.Sprintf("%s:%d", c.Host, c.Port)
}

// failure is what a failed transaction attempt calls for, decided as
// sysbench decides it.
type failure int

const (
	// retry: an error in --mysql-ignore-errors; roll back, try again.
	retry failure = iota
	// reconnect: no server error, the connection is gone (killed server,
	// restart, network), or the server is shutting down or killed it.
	reconnect
	// fatal: the run ends (txnError says why).
	fatal
)

func classify(c ConnOptions, err error) failure {
	switch n := mysqlErrno(err); {
	case n == erNoSuchTable:
		return fatal
	case n == 0 || n == erServerShutdown || n == erConnKilled || n == erClientIdle:
		return reconnect
	case c.Ignored(n):
		return retry
	}
	return fatal
}

// txnError explains a fatal failure of a transaction on table.
func txnError(c ConnOptions, table string, err error) error {
	if mysqlErrno(err) == erNoSuchTable {
		return tableError(c, table, err)
	}
	return fmt.Errorf("transaction on %s: %w (add the error number to --mysql-ignore-errors to retry it)", c.where(), err)
}

// redial calls connect until it succeeds or ctx ends, waiting 10 ms, then
// twice as long each time up to 1 s. Access denied and a missing database
// end it at once: retrying cannot help. connect's errors are
// connectError's.
func redial(ctx context.Context, connect func() error) error {
	backoff := 10 * time.Millisecond
	for {
		err := connect()
		if err == nil || errors.Is(err, ErrAccessDenied) || errors.Is(err, ErrNoDatabase) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}
