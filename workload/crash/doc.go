// Package crash is writepath's crash-recovery timing harness, the "crash"
// workload kind: it answers "how long does InnoDB take to come back after
// a crash with these settings, and did every acknowledged commit survive?".
//
// # A round
//
// Restore the datadir snapshot (taken once after prepare) -> start the
// managed server (package mysqld) with the cell's settings -> run the
// sysbench oltp_write_only load (package oltp, as a library) for
// --load-time, sampling LSN and last checkpoint once a second from SHOW
// ENGINE INNODB STATUS -> kill -9 at --kill-at (fixed, or uniform in a
// range from a recorded seed) -> optionally drop the page cache -> restart
// -> measure -> verify -> stop. --rounds N repeats it; results carry each
// round and the median/min/max. A round that fails is marked and the rest
// go on; no server is left running when Run returns, Ctrl-C included.
//
// # What kill -9 tests
//
// kill -9 of the server process alone leaves the OS page cache intact, so
// this measures InnoDB crash recovery, not fsync durability (mode kill-9).
//
// # Power loss
//
// With Spec.power_loss (mode power-loss) the datadir, and any InnoDB
// directory outside it named by innodb_log_group_home_dir,
// innodb_undo_directory, innodb_data_home_dir or innodb_doublewrite_dir,
// is served through a powerloss FUSE mount (package powerloss) in the
// instance directory; socket, pid file and error log stay outside. Once
// the server is ready the layer is synced (what the start-up did is
// durable), the load runs, the server is killed, and the power is cut:
// every write not made durable by fsync/fdatasync/O_SYNC is dropped. The
// mounts are gone and the restart runs on the backing directories. With
// Spec.torn_writes (mode power-loss+torn) each un-synced write keeps a
// 4 KiB-aligned prefix drawn from the recorded seed, and the kill waits
// (cut_when_dirty, at most cut_wait_ms) until data files hold un-synced
// writes, polling the layer every 200 µs, because only then can a data
// page tear. Each round records the cut (PowerCut) and what the restarted
// server said (Verdict: refused start, corruption lines, doublewrite
// repairs, CHECK TABLE). Times measured in these modes include the FUSE
// layer's overhead (bench/powerloss.sh): they are not native figures.
//
// The layer is served by os.Executable() with the powerloss-serve
// subcommand: the writepath binary in the CLI and on workers; a test
// binary answers that subcommand from its TestMain.
//
// # Timeline
//
// Error-log timestamps are coarse (MariaDB: whole seconds), so the restart's
// log is tailed live (package errlog) and every line is stamped with the
// moment the harness read it; the log's own timestamps are kept as
// evidence. The timeline is kill -> process start -> recovery start -> redo
// applied -> ready for connections -> first successful COMMIT, and the
// recovery time is first crash-recovery marker -> ready.
//
// # Durability ledger
//
// Every load transaction also inserts (thread, seq) into wp_ledger, inside
// the transaction. A seq is acknowledged only when its COMMIT returned OK.
// After recovery every acknowledged pair must be present (lost_acknowledged
// counts those that are not: data loss); pairs present but unacknowledged
// were in flight at the kill and are legal. Then CHECK TABLE runs on every
// table.
package crash
