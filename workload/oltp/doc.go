// Package oltp is sysbench 1.0.20's oltp_write_only, statement for
// statement, as a writepath workload kind ("oltp").
//
// Tables sbtest1..N have sysbench's schema and data (c and pad in its
// "###########-" digit-group patterns). Each transaction is
//
//	BEGIN
//	UPDATE sbtestT SET k=k+1 WHERE id=?            (--index-updates times)
//	UPDATE sbtestT SET c=? WHERE id=?              (--non-index-updates times)
//	DELETE FROM sbtestT WHERE id=?                 (--delete-inserts times,
//	INSERT INTO sbtestT (id, k, c, pad) VALUES (?, ?, ?, ?)   each a pair)
//	COMMIT
//
// with one table drawn uniformly per statement group and ids drawn from
// --rand-type (sysbench 1.0.20's default: special), as oltp_common.lua does.
// Every statement, BEGIN and COMMIT included, runs as a server-side
// prepared statement, as sysbench runs them (falling back to the text
// protocol where the server cannot prepare one, as sysbench does).
// Counting follows sysbench's MySQL driver: a
// statement that changed rows is a write, any other (BEGIN, COMMIT, an
// UPDATE or DELETE that found no row) is "other".
//
// Phases: prepare (one worker: per table create, a bulk load with multi-row
// INSERTs, the secondary index; tables in parallel), prewarm (one worker,
// only when named: sysbench's cmd_prewarm), run (every worker, --threads
// connections each, closed loop or open loop with --rate), cleanup (one).
//
// The command line is sysbench's (cmdline.go: one table for the parsers
// and the help); writepath sysbench (package sysbench) prints the phases'
// lines (Text) and reports as sysbench does.
//
// Randomness follows from the spec's rand_seed: thread i of worker w draws
// stream w*threads+i, so a spec re-run issues the same statements. Without
// --rand-seed (or with 0, sysbench's "use the clock") the command-line
// parser picks a fresh seed and stores it in the spec; the summary prints it.
//
// Measurement: each run thread records every transaction's latency in the
// Recorder under "trx" (with --rate measured from its intended start, and
// "trx_uncorrected" from its actual start), with counters transactions,
// writes, other, errors (ignored), reconnects and late. The Recorder sees
// the warm-up too (a time series should show it); the sysbench-shaped
// summary (Summarizer) leaves it out, as sysbench does.
//
// The run phase gives every connection a goroutine blocked in read(2) on
// its socket, taken from the driver after login (package wire), as a
// sysbench thread blocks in libmysqlclient (client.go says why). Per
// statement that is one write and one read, with no goroutine parked or
// woken and nothing allocated. A binary that runs it should turn the
// runtime's asynchronous preemption off (internal/preempt); without, it is
// correct but costs more CPU.
//
// The clients are a library too (Load, load.go): the crash harness runs
// them with a CommitHook that adds a statement to each transaction (its
// durability ledger's row) and learns which commits the server
// acknowledged. Without a hook a transaction costs what the run phase's
// does.
package oltp
