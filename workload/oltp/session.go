package oltp

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/workload/oltp/wire"
)

// session is a logged-in connection with its statements prepared, its
// socket detached from the driver for a client to drive.
type session struct {
	fd int
	// ids[t-1][kind-kIndexUpdate] is table t's prepared statement; 0 means
	// none (the text protocol), as do zero begin and commit.
	ids           [][4]uint32
	begin, commit uint32
	// typed[t-1][kind-kIndexUpdate]: the statement's parameter types went
	// with an execution already; the server keeps them.
	typed [][4]bool
	// hook is the CommitHook's prepared statement (0: none, or text);
	// hookTyped as typed.
	hook      uint32
	hookTyped bool
	// z is the compressed protocol's framing (--mysql-compression, when
	// the server has it); nil: plain packets.
	z *wire.Compressor
}

// openSession connects and prepares every statement up front, as
// sysbench's thread_init does, falling back to the text protocol where
// the server cannot prepare one (as sysbench does); hookSQL, if not
// empty, is a CommitHook's statement, prepared last.
func openSession(ctx context.Context, o *Options, hookSQL string) (*session, error) {
	c, err := wire.Dial(ctx, mysqlConfig(o.Conn, true))
	if err != nil {
		return nil, connectError(o.Conn, err)
	}
	stop := context.AfterFunc(ctx, c.Interrupt)
	s := &session{fd: -1, ids: make([][4]uint32, o.Tables), typed: make([][4]bool, o.Tables)}
	err = s.prepare(c, o, hookSQL)
	if !stop() || err != nil {
		c.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	s.z = c.Compressor()
	if s.fd, err = c.Detach(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) prepare(c *wire.Conn, o *Options, hookSQL string) error {
	if o.TextProtocol {
		return nil
	}
	full := false // the server refused to prepare more: the rest is text
	prep := func(query string) (uint32, error) {
		if full {
			return 0, nil
		}
		id, err := c.Prepare(query)
		if n := mysqlErrno(err); n == erTooManyPrepared || n == erUnsupportedPS {
			full = true
			return 0, nil
		}
		return id, err
	}
	var err error
	if !o.SkipTrx {
		if s.begin, err = prep("BEGIN"); err == nil {
			s.commit, err = prep("COMMIT")
		}
		if err != nil {
			return fmt.Errorf("prepare BEGIN/COMMIT on %s: %w", o.Conn.where(), err)
		}
	}
	for t := range s.ids {
		q := tableSQL(t + 1)
		for k, sql := range [4]string{q.indexUpdate, q.nonIndexUpdate, q.delete, q.insert} {
			if s.ids[t][k], err = prep(sql); err != nil {
				if mysqlErrno(err) == erNoSuchTable {
					return tableError(o.Conn, fmt.Sprintf("sbtest%d", t+1), err)
				}
				return fmt.Errorf("prepare %q on %s: %w", sql, o.Conn.where(), err)
			}
		}
	}
	if hookSQL != "" {
		if s.hook, err = prep(hookSQL); err != nil {
			return fmt.Errorf("prepare the commit hook's %q on %s: %w", hookSQL, o.Conn.where(), err)
		}
	}
	return nil
}

// quit says goodbye on a healthy idle session (the server would log an
// aborted connection otherwise) and closes it. Like sysbench's
// thread_done, it first closes the prepared statements (COM_STMT_CLOSE,
// which the server counts in Com_stmt_close and does not answer).
func (s *session) quit() {
	if s.fd < 0 {
		return
	}
	var b []byte
	add := func(pkt []byte) {
		if s.z != nil {
			pkt, _ = s.z.Frame(pkt, 0) // 5 or 9 bytes: fits a frame
		}
		b = append(b, pkt...)
	}
	closeStmt := func(id uint32) {
		if id != 0 {
			add([]byte{5, 0, 0, 0, wire.ComStmtClose, byte(id), byte(id >> 8), byte(id >> 16), byte(id >> 24)})
		}
	}
	closeStmt(s.begin)
	closeStmt(s.commit)
	for _, ids := range s.ids {
		for _, id := range ids {
			closeStmt(id)
		}
	}
	closeStmt(s.hook)
	add([]byte{1, 0, 0, 0, wire.ComQuit})
	writeAll(s.fd, b, time.Second)
	s.close()
}

// writeAll writes b to the non-blocking socket fd, waiting for room at
// most wait in all; it gives up on an error (the goodbye is best effort).
func writeAll(fd int, b []byte, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case err == unix.EAGAIN:
			left := time.Until(deadline)
			if left <= 0 {
				return
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			_, _ = unix.Poll(pfd, int(left/time.Millisecond)+1)
			continue
		case err == unix.EINTR:
			continue
		case err != nil:
			return
		}
		b = b[n:]
	}
}

func (s *session) close() {
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
		s.fd = -1
	}
}

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

// request encodes step s for session c into dst: an execution of its
// prepared statement, or the statement as text where there is none.
func request(dst []byte, c *session, s *step) ([]byte, error) {
	var id uint32
	switch s.kind {
	case kBegin:
		id = c.begin
	case kCommit:
		id = c.commit
	default:
		id = c.ids[s.table-1][s.kind-kIndexUpdate]
	}
	if id == 0 {
		return wire.Finish(appendText(wire.Header(dst, wire.ComQuery), s))
	}
	var args [4]wire.Value
	var n int
	switch s.kind {
	case kIndexUpdate, kDelete:
		args[0], n = wire.Value{Int: s.id}, 1
	case kNonIndexUpdate:
		args[0], args[1], n = wire.Value{Bytes: s.c}, wire.Value{Int: s.id}, 2
	case kInsert:
		args, n = [4]wire.Value{{Int: s.id}, {Int: s.k}, {Bytes: s.c}, {Bytes: s.pad}}, 4
	}
	if n == 0 { // BEGIN, COMMIT
		return wire.Finish(wire.AppendExecute(wire.Header(dst, wire.ComStmtExecute), id, nil, false))
	}
	typed := &c.typed[s.table-1][s.kind-kIndexUpdate]
	b := wire.AppendExecute(wire.Header(dst, wire.ComStmtExecute), id, args[:n], !*typed)
	*typed = true
	return wire.Finish(b)
}

// appendText appends step s as a text statement: the statements of
// tableSQL with the arguments in place (digits and dashes only: nothing
// to escape).
func appendText(b []byte, s *step) []byte {
	table := func(b []byte) []byte { return strconv.AppendUint(append(b, "sbtest"...), uint64(s.table), 10) }
	quoted := func(b, v []byte) []byte { return append(append(append(b, '\''), v...), '\'') }
	switch s.kind {
	case kBegin:
		return append(b, "BEGIN"...)
	case kCommit:
		return append(b, "COMMIT"...)
	case kIndexUpdate:
		b = table(append(b, "UPDATE "...))
		return strconv.AppendInt(append(b, " SET k=k+1 WHERE id="...), s.id, 10)
	case kNonIndexUpdate:
		b = quoted(append(table(append(b, "UPDATE "...)), " SET c="...), s.c)
		return strconv.AppendInt(append(b, " WHERE id="...), s.id, 10)
	case kDelete:
		b = table(append(b, "DELETE FROM "...))
		return strconv.AppendInt(append(b, " WHERE id="...), s.id, 10)
	case kInsert:
		b = append(table(append(b, "INSERT INTO "...)), " (id, k, c, pad) VALUES ("...)
		b = append(strconv.AppendInt(b, s.id, 10), ", "...)
		b = append(strconv.AppendInt(b, s.k, 10), ", "...)
		b = append(quoted(b, s.c), ", "...)
		return append(quoted(b, s.pad), ')')
	}
	return b
}
