// Package mysqlstatus samples the InnoDB write-path counters of a MySQL or
// MariaDB server next to a run: Innodb_log_waits, Innodb_dblwr_writes,
// Innodb_dblwr_pages_written, Innodb_os_log_written and Innodb_data_fsyncs
// as increases and rates between samples; Innodb_buffer_pool_pages_dirty
// and Innodb_data_pending_writes as values; the log sequence number, last
// checkpoint and checkpoint age parsed from SHOW ENGINE INNODB STATUS (MySQL
// 5.x/8.x and MariaDB 10.x formats); and, once per run, the effective
// values of the innodb_* variables that shape the write path.
//
// It is the only telemetry package that imports database/sql, so the
// worker (which must not) does not import it: workload kinds that hold a
// connection sample it and report the values as gauges and counters.
package mysqlstatus
