package oltp

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/workload/oltp/wire"
)

// The run phase gives every connection its own goroutine that waits for
// its answer in the kernel, as a sysbench thread waits in libmysqlclient:
// the server's answer wakes exactly the thread that waits for it, and that
// thread sends the next statement, often before the server's thread has
// gone back to sleep. The server then does the same work per transaction
// for either client. (An event loop driving every connection from one
// thread used less client CPU, but answered in batches: MariaDB's threads
// slept 5.6 times per transaction instead of sysbench's 3.2 and spent 30%
// more CPU per transaction, at 64 connections on 2 CPUs.)
//
// It waits in ppoll(2) for POLLIN, then reads, as libmysqlclient polls.
// (It used to block in read(2): on a Unix socket a blocked reader is also
// woken when the server takes the request off the socket, by the freed
// send buffer's write-space wake-up, which a reader's wait does not tell
// apart; it slept 1.6 times per statement, 9.5-10 voluntary switches per
// transaction against sysbench's 5.8, and the server paid for each extra
// wake-up. A poll waits for POLLIN only: 6.1-6.8 switches, 5-12% less
// client and up to 9% less server CPU per transaction, busy machine.)
//
// The polls, reads and writes are raw system calls on a non-blocking
// socket: the goroutine keeps its P while it waits, so the runtime
// schedules nothing per statement (through the runtime's system-call
// entry, the Ps were retaken and handed back: 25% fewer transactions,
// 1.6 times the client CPU). That needs a P per connection (tuneRuntime),
// and a bounded wait (pollTimeout), so that a stop-the-world waits at most
// that long for a client whose server does not answer. To the runtime
// such a goroutine runs without pause, so sysmon preempts it every 10 ms;
// with asynchronous preemption that is a signal, an interrupted wait and a
// yield each time, which at 64 connections cost 0.12 ms of client CPU per
// transaction against 0.075 ms with GODEBUG asyncpreemptoff=1, where the
// goroutine yields at its next call instead; yielding on its own
// (runtime.Gosched) after every transaction or every few milliseconds cost
// as much. The writepath binaries turn it off (internal/preempt). For the
// same reason nothing in the run phase allocates as it goes: a garbage
// collection's stop-the-world waits for the slowest answer.

// client is one connection of the run phase (sysbench's thread).
type client struct {
	s    *runState
	ss   *session
	th   *thread
	rnd  *Rand
	plan *plan
	step int // the step being executed

	timer  *time.Timer // waits for --rate slots
	out    []byte      // the request being sent
	in     []byte      // answers: in[off:n] is not yet consumed
	off, n int

	// dry is --mysql-dry-run: statements are drawn, never sent, and count
	// as "other", as sysbench's driver counts them.
	dry bool

	// hook is the client's part of the run's CommitHook (zero without
	// one), hookArgs its statement's arguments, inHook whether the step
	// in flight is the hook's statement.
	pfd      [1]unix.PollFd // the socket, for rawPoll
	hook     CommitCallbacks
	hookArgs []int64
	inHook   bool

	// mu guards ss.fd against interrupt, the only other goroutine that
	// touches it (once, on cancellation).
	mu          sync.Mutex
	interrupted bool
}

// newClient makes client i of the run on session ss.
func newClient(s *runState, ss *session, i int) (*client, error) {
	c := &client{s: s, th: s.threads[i], rnd: NewRand(s.o.Rand, s.stream+uint64(i)), plan: newPlan(&s.o),
		out: make([]byte, 0, 512), in: make([]byte, 4096), dry: s.o.DryRun}
	if h := s.hook; h != nil {
		n, err := hookArgs(h.SQL)
		if err == nil && h.Client == nil {
			err = errNoHook
		}
		if err != nil {
			ss.close()
			return nil, err
		}
		c.hook, c.hookArgs = h.Client(i), make([]int64, n)
	}
	if c.dry {
		return c, nil
	}
	if err := c.attach(ss); err != nil {
		return nil, err
	}
	return c, nil
}

// pollTimeout bounds one wait in ppoll(2); an expired wait is simply
// repeated. It bounds how long a stop-the-world waits for a client whose
// server does not answer, as asynchronous preemption is off (see above).
const pollTimeout = 50 * time.Millisecond

// attach makes ss the client's connection. Its socket stays non-blocking,
// as Detach hands it over: the client waits in ppoll, never in read.
func (c *client) attach(ss *session) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.interrupted {
		ss.close()
		return context.Canceled
	}
	c.ss, c.off, c.n = ss, 0, 0
	c.pfd[0] = unix.PollFd{Fd: int32(ss.fd)}
	return nil
}

// interrupt ends the statement in flight and every later one: the socket
// is shut down (not closed: its number stays the client's to close).
func (c *client) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.interrupted = true
	if c.ss != nil && c.ss.fd >= 0 {
		_ = unix.Shutdown(c.ss.fd, unix.SHUT_RDWR)
	}
}

// close ends the connection: COM_QUIT unless a statement was cut off.
func (c *client) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ss == nil {
		return
	}
	if c.interrupted {
		c.ss.close()
	} else {
		c.ss.quit()
	}
	c.ss = nil
}

// run executes transactions until the run is over (nil), ctx ends (nil)
// or an error ends the run.
func (c *client) run(ctx context.Context) error {
	defer c.close()
	defer context.AfterFunc(ctx, c.interrupt)()
	for {
		intended, began, ok := c.next(ctx)
		if !ok {
			c.s.limitReached()
			return nil
		}
		c.th.began.Store(began.UnixNano()) // a forced shutdown's report counts it
		if err := c.txn(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		c.th.counts.Transactions.Add(1)
		c.s.record(c.th, intended, began, time.Now())
		c.th.began.Store(0)
	}
}

// next waits for the client's next transaction: its intended start (the
// --rate schedule's slot; else now) and when it may begin; ok is false
// when the run is over for the client (time, --events, schedule, ctx).
func (c *client) next(ctx context.Context) (intended, began time.Time, ok bool) {
	s := c.s
	if s.o.Events > 0 && uint64(s.claimed.Add(1)) > s.o.Events {
		return intended, began, false
	}
	now := time.Now()
	if ctx.Err() != nil || !s.end.IsZero() && !now.Before(s.end) {
		return intended, began, false
	}
	if s.pacer == nil {
		return now, now, true
	}
	intended = s.pacer.claim()
	if !s.end.IsZero() && !intended.Before(s.end) {
		// The schedule has no slot left before the end: wait for the end,
		// as sysbench's threads wait for events until --time, so the run
		// lasts --time and its rates are per --time (--rate=1 --time=2 ran
		// 1.0 s and reported 2.0 TPS instead of 1).
		c.sleep(ctx, s.end.Sub(now))
		return intended, began, false
	}
	if wait := intended.Sub(now); wait > 0 {
		if !c.sleep(ctx, wait) {
			return intended, began, false
		}
		now = time.Now()
	}
	if now.Sub(intended) > lateAfter {
		s.late.Add(1)
		s.total.late.Add(1)
	}
	return intended, now, true
}

// sleep waits d on the client's timer; false if ctx ended first.
func (c *client) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-c.timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// txn executes one transaction, retrying it after an ignorable error
// (--mysql-ignore-errors, counted in Errors; rolled back first) and after
// a lost connection (reconnected with backoff, counted in Reconnects). It
// returns nil once the transaction committed, ctx.Err() when ctx ended, or
// an error that ends the run (a missing table, an error not to ignore).
func (c *client) txn(ctx context.Context) error {
	for {
		err := c.attempt()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o := &c.s.o
		switch classify(o.Conn, err) {
		case reconnect:
			if err := c.reconnect(ctx); err != nil {
				return err
			}
		case retry:
			c.th.counts.Errors.Add(1)
			if o.SkipTrx {
				continue
			}
			b, _ := wire.Finish(append(wire.Header(c.out, wire.ComQuery), "ROLLBACK"...))
			if _, err := c.exec(b); err != nil && mysqlErrno(err) == 0 {
				if err := c.reconnect(ctx); err != nil {
					return err
				}
			}
		default:
			return txnError(o.Conn, c.failedOn(), err)
		}
	}
}

// attempt is one try of the transaction: oltp_write_only.lua's event(),
// with the commit hook's statement, if any, before COMMIT.
func (c *client) attempt() error {
	c.plan.draw(c.rnd, &c.s.o)
	counts := c.th.counts
	if c.dry {
		counts.Other.Add(int64(len(c.plan.steps)))
		return nil
	}
	c.inHook = false
	steps := c.plan.steps
	if c.hook.Before == nil {
		for c.step = range steps {
			if err := c.statement(&steps[c.step]); err != nil {
				return err
			}
		}
		return nil
	}
	last := len(steps) // the hook's statement goes before COMMIT, if any
	if !c.s.o.SkipTrx {
		last--
	}
	for c.step = 0; c.step < last; c.step++ {
		if err := c.statement(&steps[c.step]); err != nil {
			return err
		}
	}
	err := c.hooked(steps[last:])
	if c.hook.After != nil {
		c.hook.After(err == nil, err)
	}
	return err
}

// hooked runs the hook's statement and then rest (COMMIT, or nothing).
func (c *client) hooked(rest []step) error {
	c.hook.Before(c.hookArgs)
	req, err := hookRequest(c.out, c.ss, c.s.hook.SQL, c.hookArgs)
	if err != nil {
		return err
	}
	c.out, c.inHook = req, true
	if _, err := c.exec(req); err != nil {
		return err
	}
	c.inHook = false
	for i := range rest {
		if err := c.statement(&rest[i]); err != nil {
			return err
		}
	}
	return nil
}

// statement sends step s and counts it as sysbench does: rows changed is
// a write; BEGIN, COMMIT and statements that changed nothing are "other".
func (c *client) statement(s *step) error {
	req, err := request(c.out, c.ss, s)
	if err != nil {
		return err
	}
	c.out = req
	var began time.Time
	if c.th.queries != nil { // --db-debug
		began = time.Now()
	}
	rows, err := c.exec(req)
	if c.th.queries != nil {
		c.th.queries.add(time.Since(began))
	}
	if err != nil {
		return err
	}
	if rows > 0 && s.kind != kBegin && s.kind != kCommit {
		c.th.counts.Writes.Add(1)
	} else {
		c.th.counts.Other.Add(1)
	}
	return nil
}

// failedOn names what the failing step wrote to, for errors.
func (c *client) failedOn() string {
	if c.inHook {
		return "the commit hook's statement"
	}
	return fmt.Sprintf("sbtest%d", c.plan.steps[c.step].table)
}

// exec sends one request and reads its answer: the rows affected, or the
// server's error (*mysql.MySQLError), or a connection error.
func (c *client) exec(req []byte) (uint64, error) {
	if c.ss.z != nil {
		return c.execFramed(req)
	}
	if err := c.send(req); err != nil {
		return 0, err
	}
	for {
		p, size, err := wire.Next(c.in[c.off:c.n])
		if err != nil {
			return 0, err
		}
		if size > 0 {
			c.off += size
			if c.off == c.n {
				c.off, c.n = 0, 0
			}
			return answer(p)
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
}

// execFramed is exec on a compressed connection (--mysql-compression):
// the request goes in a frame, the answer comes out of the frames read.
func (c *client) execFramed(req []byte) (uint64, error) {
	req, err := c.ss.z.Frame(req, 0)
	if err != nil {
		return 0, err
	}
	if err := c.send(req); err != nil {
		return 0, err
	}
	for {
		p, used, ok, err := c.ss.z.Packet(c.in[c.off:c.n])
		if err != nil {
			return 0, err
		}
		if c.off += used; c.off == c.n {
			c.off, c.n = 0, 0
		}
		if ok {
			return answer(p)
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
}

// answer reads an OK (the rows affected) or ERR packet.
func answer(p []byte) (uint64, error) {
	if wire.IsErr(p) {
		return 0, wire.ParseErr(p)
	}
	return wire.ParseOK(p)
}

// send writes req whole.
func (c *client) send(req []byte) error {
	fd := c.ss.fd
	for sent := 0; sent < len(req); {
		n, err := rawWrite(fd, req[sent:])
		switch {
		case err == unix.EAGAIN: // the socket's buffer is full (not for one statement)
			if err := c.wait(unix.POLLOUT); err != nil {
				return err
			}
			continue
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		}
		sent += n
	}
	return nil
}

// fill waits for more of the answer and reads it into c.in after c.n,
// first making room if a partial answer fills the buffer.
func (c *client) fill() error {
	if c.n == len(c.in) {
		if c.off > 0 {
			c.n = copy(c.in, c.in[c.off:c.n])
			c.off = 0
		} else {
			c.in = append(c.in, make([]byte, len(c.in))...)
		}
	}
	for {
		if err := c.wait(unix.POLLIN); err != nil {
			return err
		}
		n, err := rawRead(c.ss.fd, c.in[c.n:])
		switch {
		case err == unix.EINTR || err == unix.EAGAIN:
			continue // a signal, or nothing yet: wait on
		case err != nil:
			return err
		case n == 0:
			return io.EOF
		}
		c.n += n
		return nil
	}
}

// wait waits until the socket is ready for events (POLLIN, POLLOUT), or it
// broke (then the read or write says how), in waits of pollTimeout.
func (c *client) wait(events int16) error {
	c.pfd[0].Events = events
	for {
		n, err := rawPoll(&c.pfd, pollTimeout)
		switch {
		case err == unix.EINTR || n == 0 && err == nil:
			continue // a signal, or pollTimeout passed: wait on
		case err != nil:
			return err
		}
		return nil
	}
}

// reconnect replaces a lost connection (see redial).
func (c *client) reconnect(ctx context.Context) error {
	c.mu.Lock()
	if c.ss != nil {
		c.ss.close()
		c.ss = nil
	}
	c.mu.Unlock()
	return redial(ctx, func() error {
		ss, err := openSession(ctx, &c.s.o, c.s.hookSQL())
		if err == nil {
			err = c.attach(ss)
		}
		if err == nil {
			c.th.counts.Reconnects.Add(1)
		}
		return err
	})
}
