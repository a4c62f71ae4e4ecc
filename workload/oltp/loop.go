package oltp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/workload/oltp/wire"
)

// The run phase drives its connections from event loops: each loop is one
// goroutine that owns a set of connections' sockets and waits for all of
// them in one epoll_wait. A connection is a state machine that sends the
// next statement of its transaction when the answer to the last one
// arrives. Per statement that is a write(2), a read(2) and a share of an
// epoll_wait, with no goroutine parked or woken: with a goroutine per
// connection, the scheduler's hand-offs (netpoller, futex wake-ups of
// idle threads) cost more kernel time than the statements themselves, and
// on a small host that time is taken from the server under test.
//
// Each connection still runs sysbench's closed loop (or its slot of the
// --rate schedule) on its own: the loop changes who waits, not what is
// sent or when.

// session is a logged-in connection with its statements prepared, its
// socket detached from the driver for a loop to drive.
type session struct {
	fd int
	// ids[t-1][kind-kIndexUpdate] is table t's prepared statement; 0 means
	// none (the text protocol), as do zero begin and commit.
	ids           [][4]uint32
	begin, commit uint32
}

// openSession connects and prepares every statement up front, as
// sysbench's thread_init does, falling back to the text protocol where
// the server cannot prepare one (as sysbench does).
func openSession(ctx context.Context, o *Options) (*session, error) {
	c, err := wire.Dial(ctx, mysqlConfig(o.Conn, true))
	if err != nil {
		return nil, connectError(o.Conn, err)
	}
	stop := context.AfterFunc(ctx, c.Interrupt)
	s := &session{fd: -1, ids: make([][4]uint32, o.Tables)}
	err = s.prepare(c, o)
	if !stop() || err != nil {
		c.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if s.fd, err = c.Detach(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) prepare(c *wire.Conn, o *Options) error {
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
	return nil
}

// quit says goodbye on a healthy idle session (the server would log an
// aborted connection otherwise) and closes it.
func (s *session) quit() {
	if s.fd >= 0 {
		_, _ = unix.Write(s.fd, []byte{1, 0, 0, 0, wire.ComQuit})
		s.close()
	}
}

func (s *session) close() {
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
		s.fd = -1
	}
}

// lconn is one connection of a loop: a session, the thread statistics it
// records into, and the transaction in flight.
type lconn struct {
	*session
	th   *thread
	rnd  *Rand
	plan *plan
	slot int32 // index in loop.conns: the epoll user data

	state connState
	step  int  // the step whose answer is awaited
	undo  bool // the ROLLBACK after an ignored error is in flight
	// intended and began are the transaction's intended start (the
	// --rate schedule; else its start) and actual start.
	intended, began time.Time

	out     []byte // the request being written
	sent    int
	wantOut bool // EPOLLOUT is armed: the socket buffer was full
	in      []byte
	off, n  int // unread answer bytes: in[off:n]
}

type connState uint8

const (
	busy      connState = iota // a transaction is in flight
	scheduled                  // waiting for its --rate slot
	redialing                  // connection lost: a goroutine reconnects it
	finished                   // the run is over for it
)

// The epoll user data of the loop's own descriptors; connections use
// their index.
const (
	wakeSlot  = -1
	timerSlot = -2
)

// loop drives a set of connections from one goroutine.
type loop struct {
	s      *runState
	ep     int // epoll instance
	wakeFD int // eventfd: cancellation and connections back from redialing
	timeFD int // timerfd: the next --rate slot
	conns  []*lconn
	events []unix.EpollEvent
	active int // connections not finished
	queue  ring
	err    error // the first fatal error: ends the loop

	ctx     context.Context // the loop's life: reconnects end with it
	redials sync.WaitGroup
	mu      struct {
		sync.Mutex
		back  []redialed // reconnected, to be taken back
		fatal error      // a reconnect that cannot succeed
	}
}

func newLoop(s *runState, sessions []*session, threads []*thread, streams []uint64) (*loop, error) {
	l := &loop{s: s, ep: -1, wakeFD: -1, timeFD: -1}
	var err error
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	if l.wakeFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		l.close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if l.timeFD, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK); err != nil {
		l.close()
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	for _, r := range []struct{ fd, slot int }{{l.wakeFD, wakeSlot}, {l.timeFD, timerSlot}} {
		if err := l.watch(r.fd, int32(r.slot), unix.EPOLLIN); err != nil {
			l.close()
			return nil, err
		}
	}
	for i, ss := range sessions {
		c := &lconn{session: ss, th: threads[i], rnd: NewRand(s.o.Rand, streams[i]), plan: newPlan(&s.o),
			slot: int32(i), out: make([]byte, 0, 512), in: make([]byte, 4096)}
		l.conns = append(l.conns, c)
		if err := l.watch(c.fd, c.slot, unix.EPOLLIN); err != nil {
			l.close()
			return nil, err
		}
	}
	l.events = make([]unix.EpollEvent, len(l.conns)+2)
	l.queue = ring{q: make([]*lconn, len(l.conns))}
	return l, nil
}

func (l *loop) watch(fd int, slot int32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: slot}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// close releases the loop's descriptors and every connection (COM_QUIT
// on those not in the middle of a statement).
func (l *loop) close() {
	for _, c := range l.conns {
		if c.state == busy {
			c.session.close()
		} else {
			c.session.quit()
		}
	}
	l.mu.Lock()
	for _, r := range l.mu.back {
		r.s.quit()
	}
	l.mu.back = nil
	l.mu.Unlock()
	for _, fd := range []*int{&l.ep, &l.wakeFD, &l.timeFD} {
		if *fd >= 0 {
			_ = unix.Close(*fd)
			*fd = -1
		}
	}
}

// wake interrupts epoll_wait. Safe from any goroutine.
func (l *loop) wake() {
	one := [8]byte{1}
	_, _ = unix.Write(l.wakeFD, one[:])
}

// run drives the connections until every one has finished (the time,
// event count or schedule is over), ctx ends (nil) or an error that ends
// the run (returned).
func (l *loop) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	l.ctx = ctx
	defer func() {
		cancel()
		l.redials.Wait() // no reconnect outlives the loop
	}()
	stop := context.AfterFunc(ctx, l.wake)
	defer stop()
	l.active = len(l.conns)
	for _, c := range l.conns {
		l.next(c)
	}
	for l.active > 0 && l.err == nil {
		n, err := unix.EpollWait(l.ep, l.events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range l.events[:n] {
			switch ev.Fd {
			case wakeSlot:
				drain(l.wakeFD)
				if ctx.Err() != nil {
					return nil
				}
				l.takeBack()
			case timerSlot:
				drain(l.timeFD)
				l.startDue(time.Now())
			default:
				c := l.conns[ev.Fd]
				if c.fd < 0 {
					continue // lost earlier in this batch
				}
				if ev.Events&unix.EPOLLOUT != 0 {
					l.flush(c)
				}
				if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 && c.fd >= 0 {
					l.readable(c)
				}
			}
			if l.err != nil {
				break
			}
		}
	}
	return l.err
}

func drain(fd int) {
	var b [8]byte
	_, _ = unix.Read(fd, b[:])
}

// next starts c's next transaction, schedules it, or finishes c.
func (l *loop) next(c *lconn) {
	s := l.s
	if s.o.Events > 0 && uint64(s.claimed.Add(1)) > s.o.Events {
		l.finish(c)
		return
	}
	now := time.Now()
	if !s.end.IsZero() && !now.Before(s.end) {
		l.finish(c)
		return
	}
	if s.pacer == nil {
		c.intended = now
		l.start(c, now)
		return
	}
	c.intended = s.pacer.claim()
	switch {
	case !s.end.IsZero() && !c.intended.Before(s.end):
		l.finish(c)
	case c.intended.After(now):
		c.state = scheduled
		if l.queue.push(c) {
			l.arm(c.intended.Sub(now))
		}
	default:
		l.start(c, now)
	}
}

func (l *loop) finish(c *lconn) {
	c.state = finished
	l.active--
}

// start begins c's transaction at now.
func (l *loop) start(c *lconn, now time.Time) {
	if now.Sub(c.intended) > lateAfter {
		l.s.late.Add(1)
		l.s.total.late.Add(1)
	}
	c.state, c.began = busy, now
	l.attempt(c)
}

// attempt draws and sends a (new) try of c's transaction.
func (l *loop) attempt(c *lconn) {
	c.plan.draw(c.rnd, &l.s.o)
	c.step, c.undo = 0, false
	l.send(c)
}

// startDue starts the scheduled connections whose slot has come and arms
// the timer for the next.
func (l *loop) startDue(now time.Time) {
	for {
		c := l.queue.peek()
		if c == nil {
			return
		}
		if wait := c.intended.Sub(now); wait > 0 {
			l.arm(wait)
			return
		}
		l.queue.pop()
		l.start(c, now)
	}
}

func (l *loop) arm(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}
	if err := unix.TimerfdSettime(l.timeFD, 0, &spec, nil); err != nil {
		l.err = fmt.Errorf("timerfd_settime: %w", err)
	}
}

// send writes the request for c's current step.
func (l *loop) send(c *lconn) {
	var err error
	if c.out, err = l.request(c); err != nil {
		l.err = err
		return
	}
	c.sent = 0
	l.flush(c)
}

// request encodes c's current step (or the ROLLBACK) into c.out.
func (l *loop) request(c *lconn) ([]byte, error) {
	if c.undo {
		return wire.Finish(append(wire.Header(c.out, wire.ComQuery), "ROLLBACK"...))
	}
	s := &c.plan.steps[c.step]
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
		return wire.Finish(appendText(wire.Header(c.out, wire.ComQuery), s))
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
	return wire.Finish(wire.AppendExecute(wire.Header(c.out, wire.ComStmtExecute), id, args[:n]))
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

// flush writes what is left of c's request; when the socket is full it
// waits for EPOLLOUT.
func (l *loop) flush(c *lconn) {
	for c.sent < len(c.out) {
		n, err := unix.Write(c.fd, c.out[c.sent:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if !c.wantOut {
				l.interest(c, unix.EPOLLIN|unix.EPOLLOUT)
				c.wantOut = true
			}
			return
		case err != nil:
			l.lost(c, err)
			return
		}
		c.sent += n
	}
	if c.wantOut {
		l.interest(c, unix.EPOLLIN)
		c.wantOut = false
	}
}

func (l *loop) interest(c *lconn, events uint32) {
	ev := unix.EpollEvent{Events: events, Fd: c.slot}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.err = fmt.Errorf("epoll_ctl: %w", err)
	}
}

// readable reads what arrived on c and handles every whole answer.
func (l *loop) readable(c *lconn) {
	if c.n == len(c.in) { // a partial packet fills the buffer
		if c.off > 0 {
			c.n = copy(c.in, c.in[c.off:c.n])
			c.off = 0
		} else {
			c.in = append(c.in, make([]byte, len(c.in))...)
		}
	}
	n, err := unix.Read(c.fd, c.in[c.n:])
	switch {
	case err == unix.EINTR || err == unix.EAGAIN:
		return
	case err != nil:
		l.lost(c, err)
		return
	case n == 0:
		l.lost(c, io.EOF)
		return
	}
	c.n += n
	for c.fd >= 0 && l.err == nil {
		p, size, err := wire.Next(c.in[c.off:c.n])
		if err != nil {
			l.err = fmt.Errorf("connection to %s: %w", l.s.o.Conn.where(), err)
			return
		}
		if size == 0 {
			break
		}
		c.off += size
		l.answer(c, p)
	}
	if c.off == c.n {
		c.off, c.n = 0, 0
	}
}

// answer handles one answer packet for c.
func (l *loop) answer(c *lconn, p []byte) {
	if c.state != busy || c.sent < len(c.out) {
		// Nothing was asked: the server speaks first only to say it is
		// going away (shutdown, killed connection).
		if wire.IsErr(p) {
			l.lost(c, wire.ParseErr(p))
		} else {
			l.lost(c, errors.New("unexpected packet from the server"))
		}
		return
	}
	if c.undo { // the ROLLBACK's answer: whatever it says, try again
		if wire.IsErr(p) && mysqlErrno(wire.ParseErr(p)) == erServerShutdown {
			l.lost(c, wire.ParseErr(p))
			return
		}
		l.attempt(c)
		return
	}
	if wire.IsErr(p) {
		l.failed(c, wire.ParseErr(p))
		return
	}
	rows, err := wire.ParseOK(p)
	if err != nil {
		l.err = fmt.Errorf("connection to %s: %w", l.s.o.Conn.where(), err)
		return
	}
	counts := c.th.counts
	if k := c.plan.steps[c.step].kind; rows > 0 && k != kBegin && k != kCommit {
		counts.Writes.Add(1)
	} else {
		counts.Other.Add(1)
	}
	if c.step++; c.step < len(c.plan.steps) {
		l.send(c)
		return
	}
	counts.Transactions.Add(1)
	l.s.record(c.th, c.intended, c.began, time.Now())
	l.next(c)
}

// failed decides what a server error on c's statement means, as
// Runner.handle does: retry after ROLLBACK, reconnect, or end the run.
func (l *loop) failed(c *lconn, err *mysql.MySQLError) {
	o := &l.s.o
	switch n := err.Number; {
	case n == erNoSuchTable:
		l.err = tableError(o.Conn, fmt.Sprintf("sbtest%d", c.plan.steps[c.step].table), err)
	case n == erServerShutdown || n == erConnKilled || n == erClientIdle:
		l.lost(c, err)
	case o.Conn.Ignored(n):
		c.th.counts.Errors.Add(1)
		if o.SkipTrx {
			l.attempt(c)
			return
		}
		c.undo = true
		l.send(c)
	default:
		l.err = fmt.Errorf("transaction on %s: %w (add the error number to --mysql-ignore-errors to retry it)", o.Conn.where(), err)
	}
}

// lost closes c's broken connection and reconnects it in the background;
// the transaction is tried again on the new connection.
func (l *loop) lost(c *lconn, _ error) {
	c.session.close() // also leaves the epoll set
	c.off, c.n, c.sent, c.out, c.wantOut = 0, 0, 0, c.out[:0], false
	c.state = redialing
	l.redials.Add(1)
	go l.redial(c)
}

// redial reconnects c with a backoff from 10 ms to 1 s until it succeeds
// or the loop ends. Access denied or a missing database ends the run:
// retrying cannot help.
func (l *loop) redial(c *lconn) {
	defer l.redials.Done()
	ctx := l.ctx
	backoff := 10 * time.Millisecond
	for {
		ss, err := openSession(ctx, &l.s.o)
		done := true
		l.mu.Lock()
		switch {
		case err == nil:
			l.mu.back = append(l.mu.back, redialed{c, ss})
		case errors.Is(err, ErrAccessDenied) || errors.Is(err, ErrNoDatabase):
			l.mu.fatal = err
		default:
			done = false
		}
		l.mu.Unlock()
		if done {
			l.wake()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// redialed is a connection and its new session.
type redialed struct {
	c *lconn
	s *session
}

// takeBack resumes the reconnected connections: each tries its
// transaction again.
func (l *loop) takeBack() {
	l.mu.Lock()
	back, fatal := l.mu.back, l.mu.fatal
	l.mu.back = nil
	l.mu.Unlock()
	if fatal != nil {
		l.err = fatal
	}
	for _, r := range back {
		c := r.c
		c.session = r.s
		if err := l.watch(c.fd, c.slot, unix.EPOLLIN); err != nil {
			l.err = err
			c.session.close()
			continue
		}
		c.th.counts.Reconnects.Add(1)
		c.state = busy
		l.attempt(c)
	}
}

// ring is a FIFO of scheduled connections. Slots of the --rate schedule
// are claimed in increasing order, so it is also sorted by start time.
type ring struct {
	q       []*lconn
	head, n int
}

// push appends c and tells whether it is now the first.
func (r *ring) push(c *lconn) bool {
	r.q[(r.head+r.n)%len(r.q)] = c
	r.n++
	return r.n == 1
}

func (r *ring) peek() *lconn {
	if r.n == 0 {
		return nil
	}
	return r.q[r.head]
}

func (r *ring) pop() {
	r.q[r.head] = nil
	r.head = (r.head + 1) % len(r.q)
	r.n--
}
