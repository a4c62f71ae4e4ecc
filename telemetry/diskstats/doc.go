// Package diskstats samples the kernel's block-device counters in
// /proc/diskstats and turns two samples into exactly the per-interval
// figures sysstat's `iostat -x` prints (r/s, w/s, rkB/s, wkB/s, rrqm/s,
// wrqm/s, %rrqm, %wrqm, r_await, w_await, aqu-sz, rareq-sz, wareq-sz,
// %util, and the discard and flush columns where the kernel reports them).
//
// It also resolves the devices behind a workload's files or data directory:
// path -> mount table (/proc/self/mountinfo) -> major:minor -> the whole
// disk in /sys (a partition maps to its parent disk; device-mapper and md
// devices stay themselves and list their slaves).
//
// Sampling is meant to run once per interval on every worker for the
// lifetime of a run, so a Sampler keeps /proc/diskstats open, re-reads it
// into one reused buffer and parses only the lines of the devices it was
// asked for: no allocation per sample. The worker imports this package; it
// must not import database/sql.
//
// The arithmetic follows sysstat 12.x (iostat.c write_ext_stat and
// rd_stats.c compute_ext_disk_stats). Where sysstat measures the interval
// from /proc/uptime in hundredths of a second, a Sampler uses the monotonic
// clock read next to each sample; rates are otherwise computed the same way.
package diskstats
