package oltp

import (
	"context"
	"database/sql/driver"
	"fmt"
)

// The statements of oltp_common.lua, per table.
type statementSQL struct{ indexUpdate, nonIndexUpdate, delete, insert string }

func tableSQL(n int) statementSQL {
	return statementSQL{
		indexUpdate:    fmt.Sprintf("UPDATE sbtest%d SET k=k+1 WHERE id=?", n),
		nonIndexUpdate: fmt.Sprintf("UPDATE sbtest%d SET c=? WHERE id=?", n),
		delete:         fmt.Sprintf("DELETE FROM sbtest%d WHERE id=?", n),
		insert:         fmt.Sprintf("INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)", n),
	}
}

// tableStmts are one table's prepared statements on one connection,
// prepared on first use (100 tables x 64 threads x 4 statements would
// exceed max_prepared_stmt_count if prepared up front).
type tableStmts struct {
	sql      statementSQL
	prepared bool
	// text is set when the server cannot prepare more statements (1461)
	// or --db-ps-mode=disable: then statements are interpolated.
	text                                        bool
	indexUpdate, nonIndexUpdate, delete, insert driver.Stmt
}

func (t *tableStmts) reset() {
	t.prepared, t.indexUpdate, t.nonIndexUpdate, t.delete, t.insert = false, nil, nil, nil, nil
}

// tableErr names the table a statement failed on (for missing tables).
type tableErr struct {
	table string
	err   error
}

func (e *tableErr) Error() string { return e.table + ": " + e.err.Error() }
func (e *tableErr) Unwrap() error { return e.err }

// stmts returns table n's statements (1-based), preparing them if needed.
func (r *Runner) stmts(n uint32) (*tableStmts, error) {
	t := &r.tables[n-1]
	if t.prepared || t.text {
		return t, nil
	}
	if r.o.TextProtocol {
		t.text = true
		return t, nil
	}
	var err error
	for _, p := range []struct {
		dst *driver.Stmt
		sql string
	}{{&t.indexUpdate, t.sql.indexUpdate}, {&t.nonIndexUpdate, t.sql.nonIndexUpdate},
		{&t.delete, t.sql.delete}, {&t.insert, t.sql.insert}} {
		if *p.dst, err = r.c.prepare(p.sql); err != nil {
			break
		}
	}
	switch mysqlErrno(err) {
	case 0:
		if err != nil {
			return nil, err
		}
		t.prepared = true
	case erTooManyPrepared, erUnsupportedPS:
		t.text = true // as sysbench falls back to emulation
	default:
		return nil, &tableErr{table: fmt.Sprintf("sbtest%d", n), err: err}
	}
	return t, nil
}

// run executes one statement of t and counts it as sysbench does: rows
// changed is a write, none is "other".
func (r *Runner) run(t *tableStmts, s driver.Stmt, sql string, args []driver.Value) error {
	var n int64
	var err error
	if t.text {
		n, err = r.c.exec(sql, args...)
	} else {
		n, err = stmtExec(s, args)
	}
	if err != nil {
		return err
	}
	r.count(n)
	return nil
}

func (r *Runner) count(rows int64) {
	if rows > 0 {
		r.Counts.Writes.Add(1)
	} else {
		r.Counts.Other.Add(1)
	}
}

// attempt is one try of the transaction: oltp_write_only.lua's event().
func (r *Runner) attempt(ctx context.Context) error {
	r.plan.draw(r.rnd, &r.o)
	for i := range r.plan.steps {
		var err error
		switch s := &r.plan.steps[i]; s.kind {
		case kBegin:
			err = r.control(r.beginStmt, "BEGIN")
		case kCommit:
			// commit, below: after the hook's statements
		default:
			err = r.statement(i, s)
		}
		if err != nil {
			return err
		}
	}
	return r.commit(ctx)
}

// statement runs step i, s, of the plan.
func (r *Runner) statement(i int, s *step) error {
	t, err := r.stmts(s.table)
	if err != nil {
		return err
	}
	switch s.kind {
	case kIndexUpdate:
		r.a1[0] = s.id
		return r.run(t, t.indexUpdate, t.sql.indexUpdate, r.a1[:])
	case kNonIndexUpdate:
		r.a2[0], r.a2[1] = r.cvals[i], s.id
		return r.run(t, t.nonIndexUpdate, t.sql.nonIndexUpdate, r.a2[:])
	case kDelete:
		r.a1[0] = s.id
		return r.run(t, t.delete, t.sql.delete, r.a1[:])
	case kInsert:
		r.a4[0], r.a4[1], r.a4[2], r.a4[3] = s.id, s.k, r.cvals[i], r.padvals[i]
		return r.run(t, t.insert, t.sql.insert, r.a4[:])
	}
	return fmt.Errorf("statement kind %d", s.kind)
}

// commit runs the hook's statements and COMMIT, and reports the outcome.
func (r *Runner) commit(ctx context.Context) error {
	if r.hook.BeforeCommit != nil {
		if err := r.hook.BeforeCommit(ctx, r); err != nil {
			r.after(false, err)
			return err
		}
	}
	if !r.o.SkipTrx {
		if err := r.control(r.commitStmt, "COMMIT"); err != nil {
			r.after(false, err)
			return err
		}
	}
	r.after(true, nil)
	return nil
}

func (r *Runner) after(acked bool, err error) {
	if r.hook.AfterCommit != nil {
		r.hook.AfterCommit(acked, err)
	}
}

// control runs BEGIN or COMMIT, prepared when possible; it changes no row,
// so it counts as "other".
func (r *Runner) control(s driver.Stmt, sql string) error {
	var err error
	if s != nil {
		_, err = stmtExec(s, nil)
	} else {
		_, err = r.c.exec(sql)
	}
	if err == nil {
		r.Counts.Other.Add(1)
	}
	return err
}
