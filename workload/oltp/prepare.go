package oltp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writepath/writepath/workload"
	"github.com/writepath/writepath/workload/oltp/wire"
)

// Prepare tunables.
const (
	// bulkRows is the rows of one prepared multi-row INSERT: 4,000
	// parameters (at most 65,535), about 200 KB, far under
	// max_allowed_packet (16 MB MariaDB, 64 MB MySQL). On a 2-core
	// MariaDB 10.11, 250 and 1,000 rows loaded alike, 4,000 and 16,000
	// slower.
	bulkRows = 1000
	// bulkBytes bounds one text multi-row INSERT (about 1,300 rows), the
	// fallback where statements cannot be prepared; 256 KB loaded faster
	// than 1 MB or 4 MB.
	bulkBytes = 256 << 10
)

// Prepare creates the tables and loads them with up to --threads
// connections, each table followed by its secondary index, printing
// sysbench's lines on o.Text ("Creating table 'sbtest1'...", "Inserting
// 10000 records into 'sbtest1'", "Creating a secondary index on
// 'sbtest1'..."). Like sysbench, each table is loaded by one connection,
// tables in parallel; with fewer than half as many tables as threads the
// tables are first created, then loaded in id ranges by several
// connections each, then indexed (see chunks).
func Prepare(ctx context.Context, o Options, env workload.Env) error {
	if o.DryRun {
		// --mysql-dry-run: every statement "succeeds" without a server.
		if o.Threads > 1 {
			o.Text.Printf(LevelNotice, "Initializing worker threads...\n")
		}
		for n := 1; n <= o.Tables; n++ {
			_ = createTable(func(string) error { return nil }, o, n)
			_ = createIndex(func(string) error { return nil }, o, n)
		}
		return nil
	}
	if err := checkSSL(ctx, o.Conn); err != nil {
		return err
	}
	c, err := dial(ctx, o.Conn, false)
	if err != nil {
		return connectError(o.Conn, err)
	}
	stop := c.interruptOn(ctx)
	defer func() { stop(); c.close() }()
	if _, err := c.exec("CREATE DATABASE IF NOT EXISTS " + quoteIdent(o.Conn.DB)); err != nil {
		return fmt.Errorf("prepare: create database %s: %w", o.Conn.DB, err)
	}
	if _, err := c.exec("USE " + quoteIdent(o.Conn.DB)); err != nil {
		return fmt.Errorf("prepare: use %s: %w", o.Conn.DB, err)
	}
	if o.Threads > 1 {
		o.Text.Printf(LevelNotice, "Initializing worker threads...\n") // sysbench's parallel command
	}
	names, err := loadCharset(c)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	work := chunks(o)
	var done atomic.Int64
	stopBar := progressBar(barWriter(o, env), int64(o.Tables)*int64(o.TableSize), &done)
	defer stopBar()
	if len(work) == o.Tables {
		// One chunk per table: each connection creates, loads and indexes
		// whole tables, as a sysbench thread does.
		return parallel(ctx, o, o.Tables, names, func(c *wire.Conn, i int) error {
			if err := createTable(wireExec(c), o, i+1); err != nil {
				return err
			}
			if err := loadChunk(c, o, work[i], i, &done); err != nil {
				return err
			}
			return createIndex(wireExec(c), o, i+1)
		})
	}
	for n := 1; n <= o.Tables; n++ {
		if err := createTable(connExec(c), o, n); err != nil {
			return err
		}
	}
	err = parallel(ctx, o, len(work), names, func(c *wire.Conn, i int) error {
		return loadChunk(c, o, work[i], i, &done)
	})
	if err != nil {
		return err
	}
	return parallel(ctx, o, o.Tables, "", func(c *wire.Conn, i int) error { return createIndex(wireExec(c), o, i+1) })
}

// barWriter is where the progress bar is drawn: env.Progress, unless
// sysbench's lines are printed (they tell the progress, and a bar redrawn
// over them would garble them).
func barWriter(o Options, env workload.Env) io.Writer {
	if o.Text != nil {
		return nil
	}
	return env.Progress
}

// execFunc runs one statement: wireExec or connExec.
type execFunc func(query string) error

func wireExec(c *wire.Conn) execFunc {
	return func(q string) error { _, err := c.Exec(q); return err }
}

func connExec(c *conn) execFunc {
	return func(q string) error { _, err := c.exec(q); return err }
}

// createTable creates table n, saying so as sysbench does.
func createTable(exec execFunc, o Options, n int) error {
	o.Text.Print("Creating table 'sbtest%d'...", n)
	if err := exec(createTableSQL(o, n)); err != nil {
		if mysqlErrno(err) == erTableExists {
			return fmt.Errorf("prepare: %w: %s.sbtest%d at %s: run the cleanup phase first", ErrTableExists, o.Conn.DB, n, o.Conn.where())
		}
		return fmt.Errorf("prepare: create sbtest%d: %w", n, err)
	}
	if o.TableSize > 0 {
		o.Text.Print("Inserting %d records into 'sbtest%d'", o.TableSize, n)
	}
	return nil
}

// createIndex adds the secondary index of table n (--create-secondary).
func createIndex(exec execFunc, o Options, n int) error {
	if !o.CreateSecondary {
		return nil
	}
	o.Text.Print("Creating a secondary index on 'sbtest%d'...", n)
	if err := exec(createIndexSQL(n)); err != nil {
		return fmt.Errorf("prepare: index on sbtest%d: %w", n, err)
	}
	return nil
}

// chunk is rows [from, to] of table.
type chunk struct{ table, from, to int }

// chunks splits the load into contiguous id ranges. A table is best
// loaded by one writer appending at the right edge of its primary key (as
// sysbench loads it): several writers in one B-tree contend on its index
// latch and split pages mid-range, which measured slower (8 x 100,000 rows,
// 16 threads: 4.3 s with one writer per table, 5-11 s with five 20,000-row
// chunks per table). Tables are split only when there are fewer than half
// as many tables as threads, into threads/(2*tables) ranges each, so a
// single big table still loads in parallel.
func chunks(o Options) []chunk {
	per := max(1, o.Threads/(2*o.Tables))
	size := (o.TableSize + per - 1) / per
	var out []chunk
	for t := 1; t <= o.Tables; t++ {
		for from := 1; from <= o.TableSize; from += size {
			out = append(out, chunk{t, from, min(from+size-1, o.TableSize)})
		}
	}
	return out
}

// loadCharset returns the SET NAMES statement that makes the load
// connections speak the tables' character set ("" to keep the default):
// the database's, as the tables are created without one. The load is
// bound by the server's CPU, and converting every c and pad value from
// the connection's utf8mb4 (sysbench's default too) to a latin1 table
// took 30% of it on MariaDB 10.11; in the tables' own character set the
// server copies them. The values are ASCII digits and dashes, the same
// bytes in every character set allowed here. The run phase keeps utf8mb4,
// as sysbench does, so that its load is sysbench's.
func loadCharset(c *conn) (string, error) {
	v, err := c.queryStrings("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()")
	if err != nil {
		return "", fmt.Errorf("character set of %s: %w", "the database", err)
	}
	if len(v) != 1 {
		return "", nil
	}
	switch cs := v[0]; cs {
	case "latin1", "ascii", "utf8", "utf8mb3", "utf8mb4", "binary":
		return "SET NAMES " + cs, nil
	}
	return "", nil
}

// loadChunk loads chunk w, the i-th of chunks(o): its random stream is
// the chunk's, so the data is the same whatever the thread count.
func loadChunk(c *wire.Conn, o Options, w chunk, i int, done *atomic.Int64) error {
	rnd := NewRand(o.Rand, uint64(1<<32)+uint64(i))
	err := loadPrepared(c, o, w, rnd, done)
	if n := mysqlErrno(err); n == erTooManyPrepared || n == erUnsupportedPS || err == errTextProtocol {
		err = loadText(c, o, w, rnd, done)
	}
	return err
}

// errTextProtocol: --db-ps-mode=disable asks for text statements.
var errTextProtocol = errors.New("text protocol")

// loadPrepared loads chunk w with a prepared multi-row INSERT: the server
// parses the statement once instead of 200 KB of values per statement,
// which made the load about 1.5x faster than sysbench's text INSERTs
// (bench/oltp.md). The rows are those loadText sends.
func loadPrepared(c *wire.Conn, o Options, w chunk, rnd *Rand, done *atomic.Int64) error {
	if o.TextProtocol {
		return errTextProtocol
	}
	var ids [2]uint32 // for bulkRows rows, and for the chunk's last, shorter batch
	var typed [2]bool // the statement's parameter types were sent
	defer func() {
		for _, id := range ids {
			if id != 0 {
				_ = c.CloseStmt(id) // connections load many chunks: free the server's statements
			}
		}
	}()
	stmt := func(slot, rows int) (uint32, error) {
		if ids[slot] == 0 {
			var err error
			if ids[slot], err = c.Prepare(bulkInsertSQL(w.table, rows)); err != nil {
				return 0, err
			}
		}
		return ids[slot], nil
	}
	args := make([]wire.Value, 4*min(bulkRows, w.to-w.from+1))
	for r := 0; r < len(args); r += 4 {
		args[r+2].Bytes, args[r+3].Bytes = []byte(cTemplate), []byte(padTemplate)
	}
	for from := w.from; from <= w.to; {
		n := min(bulkRows, w.to-from+1)
		slot := 0
		if n < bulkRows {
			slot = 1
		}
		id, err := stmt(slot, n)
		if err != nil {
			return err
		}
		for r := range n {
			a := args[4*r : 4*r+4]
			rnd.FillDigits(a[2].Bytes)
			rnd.FillDigits(a[3].Bytes)
			a[0].Int, a[1].Int = int64(from+r), int64(rnd.Default(1, uint32(o.TableSize)))
		}
		if _, err := c.Execute(id, args[:4*n], !typed[slot]); err != nil {
			return fmt.Errorf("prepare: load sbtest%d rows %d..%d: %w", w.table, from, from+n-1, err)
		}
		typed[slot] = true
		done.Add(int64(n))
		from += n
	}
	return nil
}

// loadText loads chunk w with text multi-row INSERTs, as sysbench does.
func loadText(c *wire.Conn, o Options, w chunk, rnd *Rand, done *atomic.Int64) error {
	b := &bulkInsert{rnd: rnd, size: uint32(o.TableSize),
		c: []byte(cTemplate), pad: []byte(padTemplate), maxBytes: bulkBytes}
	var buf []byte
	for from := w.from; from <= w.to; {
		var next int
		buf, next = b.next(buf, w.table, from, w.to)
		if _, err := c.Exec(string(buf)); err != nil {
			return fmt.Errorf("prepare: load sbtest%d rows %d..%d: %w", w.table, from, next-1, err)
		}
		done.Add(int64(next - from))
		from = next
	}
	return nil
}

// parallel runs n items on up to --threads connections to the database,
// each first running init (if not empty).
// The first error cancels the other connections and is returned; a
// cancelled ctx returns its error.
func parallel(ctx context.Context, o Options, n int, init string, f func(c *wire.Conn, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for t := 0; t < min(o.Threads, n); t++ {
		wg.Go(func() {
			if err := parallelWorker(ctx, o, n, &next, init, f); err != nil {
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

func parallelWorker(ctx context.Context, o Options, n int, next *atomic.Int64, init string, f func(c *wire.Conn, i int) error) error {
	c, err := wire.Dial(ctx, mysqlConfig(o.Conn, true))
	if err != nil {
		return connectError(o.Conn, err)
	}
	stop := context.AfterFunc(ctx, c.Interrupt)
	defer func() { stop(); c.Close() }()
	if init != "" {
		if _, err := c.Exec(init); err != nil {
			return fmt.Errorf("prepare: %s on %s: %w", init, o.Conn.where(), err)
		}
	}
	for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
		if err := f(c, i); err != nil {
			if ctx.Err() != nil {
				return nil // another worker's error (or the caller) ended the phase
			}
			return err
		}
	}
	return nil
}

// progressBar redraws "rows/total, rows/s, ETA" on w twice a second until
// the returned stop is called. A nil w draws nothing.
func progressBar(w io.Writer, total int64, done *atomic.Int64) (stop func()) {
	if w == nil {
		return func() {}
	}
	start := time.Now()
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				drawBar(w, done.Load(), total, time.Since(start))
				fmt.Fprintln(w)
				return
			case <-t.C:
				drawBar(w, done.Load(), total, time.Since(start))
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

func drawBar(w io.Writer, done, total int64, elapsed time.Duration) {
	const width = 30
	frac := float64(done) / float64(max(total, 1))
	filled := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = ' '
		if i < filled {
			bar[i] = '#'
		}
	}
	rate := float64(done) / max(elapsed.Seconds(), 1e-9)
	eta := "--"
	if rate > 0 && done < total {
		eta = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(w, "\rprepare [%s] %d/%d rows %5.1f%%  %.0f rows/s  ETA %s   ", bar, done, total, 100*frac, rate, eta)
}

// Cleanup drops the tables.
func Cleanup(ctx context.Context, o Options, env workload.Env) error {
	if err := checkSSL(ctx, o.Conn); err != nil && !o.DryRun {
		return err
	}
	if o.DryRun {
		for n := 1; n <= o.Tables; n++ {
			o.Text.Print("Dropping table 'sbtest%d'...", n)
		}
		return nil
	}
	c, err := dial(ctx, o.Conn, true)
	if err != nil {
		return connectError(o.Conn, err)
	}
	stop := c.interruptOn(ctx)
	defer func() { stop(); c.close() }()
	for n := 1; n <= o.Tables; n++ {
		o.Text.Print("Dropping table 'sbtest%d'...", n)
		if _, err := c.exec(dropTableSQL(n)); err != nil {
			return fmt.Errorf("cleanup: drop sbtest%d: %w", n, err)
		}
	}
	return nil
}
