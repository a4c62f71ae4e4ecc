// Package hostknob reads, sets and restores the host settings below a
// database's write path: block-queue attributes of the disks behind a
// directory (scheduler, nr_requests, nomerges, write_cache, read_ahead_kb,
// rq_affinity, wbt_lat_usec, max_sectors_kb), vm sysctls (dirty_*,
// swappiness) and the options of the directory's filesystem that the
// kernel changes on remount (noatime, nodiratime, lazytime, ext4's barrier,
// commit=N, discard, ...).
//
// A Host checks a set of Settings against the operator's Allow list and
// the kernel's own limits without changing anything (Check), then applies
// them (Apply): the values before are written to a Journal and fsynced
// before the first change, every knob is set in a fixed order (an I/O
// scheduler switch resets nr_requests; write_cache and max_sectors_kb
// reset read_ahead_kb; a vm *_bytes sysctl zeroes its *_ratio twin), read
// back (the kernel clamps nr_requests and max_sectors_kb), and Restore puts
// every value back in the same order. A refusal part way rolls back what
// was already changed. A Host opened on a journal a killed process left
// behind restores what that process changed before anything else.
//
// The Journal is independent of the knobs: any host change with a value
// before and a way back (a Restorer per Change.Kind) can use it.
package hostknob
