// Package fio is writepath's fio-equivalent workload kind: it speaks fio's
// options (command line and INI job files), lays files out exactly as fio
// 3.33's filesetup.c does, runs the jobs with the psync, sync, pvsync and
// libaio engines (kernel AIO through raw io_setup/io_submit/io_getevents
// system calls, no cgo), and reports in fio's normal text and fio-3.x-shaped
// JSON.
//
// # Measurement
//
// Latencies are nanoseconds in hist.Histograms (one geometry, exact merges):
//
//   - slat: from preparing an I/O to io_submit returning (async engines only).
//   - clat: from submission to completion (for sync engines, the syscall).
//   - lat: slat + clat, from preparing to completion.
//   - sync: an fsync=N / fdatasync=N call, from just before the system call
//     to its return. With libaio, fio issues the sync as a blocking call
//     from the job's thread while up to iodepth-1 writes stay in flight
//     (Linux has no aio fsync for regular files); so do we, so the sync
//     latency is the time the job was blocked in fsync(2) (journal commit
//     and device cache flush included), not the latency of a queued request.
//
// One deliberate difference: fio 3.33's libaio engine never stamps the
// issue time of a sync (only io_submit'd requests get one, in
// fio_libaio_queued), so fio's sync lat_ns is measured from the issue time
// the same io_u slot had as an earlier write, and tracks write clat rather
// than fsync(2). We report the real fsync(2) time; expect our sync
// percentiles to be far below fio's for libaio jobs (psync jobs agree).
//
// The workload Recorder receives the completion latency of every read and
// write and the latency of every sync (op names "read", "write", "sync")
// through one Handle per job goroutine; each job also keeps cumulative
// histograms for the final report, so group_reporting merges histograms and
// never averages percentiles. ramp_time is excluded from both.
//
// # Determinism
//
// A Spec carries every option resolved, random seeds included: randrepeat=0
// draws a seed when the spec is built, not when it runs, so every worker
// given the spec runs the same pattern (shard index mixed in when a phase
// runs on several workers).
//
// # Several files per job
//
// nrfiles=, filename=a:b (fio's \: escape) and filename_format= give a
// clone several files, each confined by the guard as a single file is.
// They are sized as fio 3.33's setup_files sizes them (size= divided, the
// first files a block more; filesize= or a filesize= range drawn with
// fio's file_size_state), laid out with fio's one "Laying out IO files"
// line, and each I/O goes to the file fio's get_next_file picks:
// roundrobin, sequential or random (fio's next_file_state generator and
// seed), file_service_type=...:N I/Os per turn, zipf, pareto and normal
// (lib/zipf.c and lib/gauss.c over fio's generator). A sync due after N
// writes goes to the file whose turn it is, as in fio. loops= and
// io_size= beyond what the files hold take passes as fio's keep_running.
// Files are opened as their turns come and closed when done (openfiles=
// bounds how many take I/O at once, a turn on a file that cannot open is
// fio's -EBUSY); unlink_each_loop= removes them once a loop's I/O has
// completed. For jobs without random offsets the I/O log (write_iolog) is
// fio's line for line, file actions included. One difference: with the
// queueing engines (libaio, io_uring, posixaio, offload) a file's
// descriptor, once opened, stays open until the job ends (a request may
// still fly on it when its turn ends), so openfiles= bounds the files in
// use there, not the descriptors; the synchronous engines close it as
// fio does.
//
// # Differences from fio
//
// ioengine=posixaio runs as glibc's POSIX AIO does: the job hands each
// request to one helper thread per file, which performs them in order
// (slat ends at the hand-off; clat includes the wait for the thread).
// pvsync2 is preadv2/pwritev2 without flags.
//
// Trims (rw=trim, randtrim, trimwrite, randtrimwrite) are BLKDISCARD on
// block devices, as fio's os_trim, and fail with ENOTTY on regular files
// as fio's do; the queueing engines issue them synchronously, as fio's
// libaio and io_uring engines do. A trimwrite's write takes its trim's
// offset and length; fio's sequential trimwrite writes on a stream of its
// own with the write block size, which is the same thing when trim and
// write sizes agree.
//
// Write buffers are filled with random bytes once per job and not
// re-scrambled per I/O. --parse-only accepts what fio 3.33's does (all of
// fio's options, any engine, the options of the section's engine); what
// cannot run here is refused before any I/O, naming where and why
// (refuse.go), never ignored. io_uring runs with fio's engine defaults
// only (no sqthread_poll, fixedbufs, registerfiles or hipri).
//
// libaio and io_uring batch as fio: iodepth_batch_submit requests per
// io_submit/io_uring_enter, iodepth_batch_complete_min to _max
// completions per wait, a full queue reaped down to iodepth_low.
//
// Numbers are read as fio 3.33's str_to_decimal reads them (fionum.go):
// KiB, MiB, ... are powers of 1000 at fio's default kb_base, counts take
// k/m/g, a tail after the number and its unit is ignored where it holds
// no letter or digit ("65536)"); where fio silently reads something else
// than the value says ("4.5k" as 4, "10sec" as 10 µs, "1024*1024" as
// 1024) the job is refused when run, naming fio's reading. Arithmetic is
// evaluated in parentheses ("(1024*1024)") and in a value with a reserved
// word ("8*$pagesize", which fio hands to bc), as fio's HOWTO says.
//
// latency_target's search (latency.go) steps the depth down once at the
// top of the job's loop after a slow I/O at latency_percentile=100, and
// the completions of the drain that follows are not counted against the
// next depth; fio steps down inside the slow completion, and its drain's
// slow completions step it down again. fill_device runs write-only jobs;
// fio's lay-out-until-full for jobs that read is refused when run.
//
// # Errors
//
// `writepath fio` reports a job's I/O error and a latency over max_latency
// as fio 3.33 does and where: fio's log_err line on stderr as it happens
// ("fio: io_u error on file F: No space left on device: write offset=N,
// buflen=N", also for the ENOSPC ending a fill_device job), its "fio:
// pid=N, err=E/file:io_u.c:1876, func=io_u error, error=..." line on the
// report's output as the job ends, the same verror in the job's report
// line, and fio's exit status, the number of jobs that failed (JobsFailed).
// The file:line in verror is where fio's source sets it, fio's own.
package fio
