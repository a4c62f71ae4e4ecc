package oltp

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"
)

// Hook lets a caller take part in every transaction a Runner executes. The
// crash harness uses it to write a ledger row inside each transaction and
// to learn which commits the server acknowledged.
type Hook struct {
	// BeforeCommit runs inside the transaction, after sysbench's statements
	// and before COMMIT, on the Runner's connection. An error it returns
	// is handled like a failed statement (retried when ignorable).
	BeforeCommit func(ctx context.Context, s Session) error
	// AfterCommit reports the end of every attempt that reached the
	// commit step (BeforeCommit, then COMMIT): acked is true when the
	// server acknowledged the COMMIT (in --skip-trx mode: the statements).
	// With acked false the transaction did not commit, or (err is a
	// connection error after COMMIT was sent) its fate is unknown.
	AfterCommit func(acked bool, err error)
}

// Session executes extra statements inside a Runner's transaction.
type Session interface {
	// Exec runs query (with ? placeholders) and returns the rows affected.
	Exec(query string, args ...any) (int64, error)
}

// Counts are a Runner's running totals, counted as sysbench counts them.
// They are updated by the Runner's goroutine and may be read by any.
type Counts struct {
	Transactions, Writes, Other, Errors, Reconnects atomic.Int64
}

// Runner executes oltp_write_only transactions on one connection. It is
// owned by one goroutine: its statements, random source and buffers are
// never shared, so the hot path takes no lock.
type Runner struct {
	o      Options
	rnd    *Rand
	hook   Hook
	c      *conn
	stopIt func() bool // detaches the interrupt of c
	ctx    context.Context
	tables []tableStmts
	// beginStmt and commitStmt are the prepared BEGIN and COMMIT (nil: sent as
	// text, when the server cannot prepare them or --db-ps-mode=disable).
	beginStmt, commitStmt driver.Stmt
	// Counts are this Runner's totals.
	Counts Counts

	// plan is the transaction being run. cvals and padvals box each
	// step's c and pad buffers once (the interface keeps pointing at the
	// array the draw refills), so binding them allocates nothing.
	plan           *plan
	cvals, padvals []driver.Value
	a1             [1]driver.Value
	a2             [2]driver.Value
	a4             [4]driver.Value
}

// NewRunner connects and returns a Runner drawing from random stream
// stream (give each concurrent Runner its own). ctx bounds the Runner's
// whole life: when it is done, a statement in flight fails at once.
func NewRunner(ctx context.Context, o Options, stream uint64, hook Hook) (*Runner, error) {
	r := &Runner{o: o, rnd: NewRand(o.Rand, stream), hook: hook, ctx: ctx,
		tables: make([]tableStmts, o.Tables)}
	for i := range r.tables {
		r.tables[i].sql = tableSQL(i + 1)
	}
	r.plan = newPlan(&r.o)
	r.cvals, r.padvals = make([]driver.Value, len(r.plan.steps)), make([]driver.Value, len(r.plan.steps))
	for i, s := range r.plan.steps {
		if s.c != nil {
			r.cvals[i] = s.c
		}
		if s.pad != nil {
			r.padvals[i] = s.pad
		}
	}
	c, err := dial(ctx, o.Conn, true)
	if err != nil {
		return nil, connectError(o.Conn, err)
	}
	if err := r.attach(c); err != nil {
		r.Close()
		return nil, fmt.Errorf("prepare BEGIN/COMMIT on %s: %w", o.Conn.where(), err)
	}
	return r, nil
}

// attach starts using c: statements are prepared again (lazily for the
// tables; BEGIN and COMMIT at once, as sysbench's thread_init does).
func (r *Runner) attach(c *conn) error {
	r.c = c
	r.stopIt = c.interruptOn(r.ctx)
	for i := range r.tables {
		r.tables[i].reset()
	}
	r.beginStmt, r.commitStmt = nil, nil
	if r.o.TextProtocol || r.o.SkipTrx {
		return nil
	}
	var err error
	if r.beginStmt, err = c.prepare("BEGIN"); err == nil {
		r.commitStmt, err = c.prepare("COMMIT")
	}
	if n := mysqlErrno(err); n == erUnsupportedPS || n == erTooManyPrepared {
		r.beginStmt, r.commitStmt, err = nil, nil, nil // as sysbench: emulate
	}
	return err
}

// Close closes the connection. The Runner cannot be used afterwards.
func (r *Runner) Close() {
	if r.c != nil {
		r.stopIt()
		r.c.close()
		r.c = nil
	}
}

// Txn executes one transaction, retrying it after an ignorable error
// (--mysql-ignore-errors, counted in Errors) and after a lost connection
// (reconnecting with backoff, counted in Reconnects). It returns nil once
// the transaction committed, ctx.Err() when ctx ended, or an error that
// ends the run (missing table, an error not to be ignored).
func (r *Runner) Txn(ctx context.Context) error {
	for {
		err := r.attempt(ctx)
		if err == nil {
			r.Counts.Transactions.Add(1)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := r.handle(ctx, err); err != nil {
			return err
		}
	}
}

// handle decides what a failed attempt means: retry (nil) or stop.
func (r *Runner) handle(ctx context.Context, err error) error {
	switch classify(r.o.Conn, err) {
	case reconnect:
		return r.reconnect(ctx)
	case retry:
		r.Counts.Errors.Add(1)
		if !r.o.SkipTrx {
			if _, rerr := r.c.exec("ROLLBACK"); rerr != nil && mysqlErrno(rerr) == 0 {
				return r.reconnect(ctx)
			}
		}
		return nil
	}
	var te *tableErr
	if errors.As(err, &te) {
		return txnError(r.o.Conn, te.table, te.err)
	}
	return txnError(r.o.Conn, "", err)
}

// reconnect replaces the connection (see redial).
func (r *Runner) reconnect(ctx context.Context) error {
	r.Close()
	return redial(ctx, func() error {
		c, err := dial(ctx, r.o.Conn, true)
		if err != nil {
			return connectError(r.o.Conn, err)
		}
		if err := r.attach(c); err != nil {
			r.Close()
			return err
		}
		r.Counts.Reconnects.Add(1)
		return nil
	})
}

// Exec implements Session on the Runner's connection.
func (r *Runner) Exec(query string, args ...any) (int64, error) {
	vals := make([]driver.Value, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return 0, fmt.Errorf("exec %q: argument %d: %w", query, i+1, err)
		}
		vals[i] = v
	}
	return r.c.exec(query, vals...)
}

var _ Session = (*Runner)(nil)
