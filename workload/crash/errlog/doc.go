// Package errlog reads what a MySQL 8 or MariaDB 10.11 error log says
// about a server start: Parser turns lines into Events (Markers with the
// LSNs and counts they carry), Scanner folds them into a Recovery (the
// timeline's points, the redo span, batches, rollbacks), and Tail follows
// a live log, stamping each line with the moment it was read, since the
// logs' own timestamps are coarse (MariaDB: whole seconds).
//
// Markers cover MySQL 8 ([MY-012551], [MY-012552], checkpoint_lsn,
// "scanned up to", "Apply batch completed" — which also appears on clean
// starts, so it means something only after a recovery start) and MariaDB
// 10.11 ("Starting crash recovery from checkpoint LSN=", "End of log at
// LSN=", "To recover:", multi-batch recovery, rollback of recovered
// transactions, ready with the port on the following "Version:" line,
// which may lack its newline). A ready line on another port (0: an init
// server) does not count. The redo span to replay is end-of-log LSN -
// checkpoint LSN. It imports nothing of ours.
package errlog
