// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Block-layer and syscall evidence for writepath, bucketed in the kernel.
 *
 * Every value is counted at the bucket index writepath's hist package (HDR,
 * 1 ns .. 1 h, 3 significant digits) gives it, so user space rebuilds each
 * series as a hist.Histogram with nothing lost beyond HDR's own precision.
 * Counts only grow; user space reads them once per interval and takes the
 * increase, so no event wakes user space and none is counted twice.
 *
 * The counts live in per-CPU arrays, whose lookups the kernel inlines (no
 * helper call, no hashing, no lock): a series' index space is cut into
 * pages of 256 buckets, a per-CPU directory per series gives the page that
 * holds each range, and pages are handed out from a per-CPU pool the first
 * time a range is hit in a phase. A per-CPU hash keyed by (series, bucket)
 * cost ~400 ns per value on a loaded VM (hashing, bucket walk, three cache
 * lines); a directory entry and a counter are two lines, mostly hot.
 *
 * Series, numbered densely (series_of):
 *   D2C    per device slot and op: issue -> complete, ns
 *   Q2D    per device slot and op: insert -> issue, ns (only requests a
 *          scheduler or the dispatch list queued: with "none" most go
 *          straight out)
 *   BYTES  per device slot and op: request size at issue
 *   REDO   read/write: size of requests that overlap the redo log's
 *          extents (FIEMAP, set by user space)
 *   SYSW   process of interest: bytes returned by write-family syscalls
 *   FSYNC, FDSYNC  process of interest: syscall enter -> exit, ns
 */
#include "types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum metric {
	M_D2C = 0,
	M_Q2D = 1,
	M_BYTES = 2,
	M_REDO = 3,
	M_SYSW = 4,
	M_FSYNC = 5,
	M_FDSYNC = 6,
};

/* Ops as the series name them; anything else (write zeroes, zone, driver
 * private) is OP_OTHER. */
enum op {
	OP_READ = 0,
	OP_WRITE = 1,
	OP_FLUSH = 2,
	OP_DISCARD = 3,
	OP_OTHER = 4,
};

/* HDR geometry of package hist: sub-bucket count 2048 (half 1024), unit 1. */
#define HDR_SUB_MAGNITUDE 10
#define HDR_HIGHEST 3600000000000ULL /* 1 h in ns; larger values overflow */
#define HDR_OVERFLOW 0xffff          /* index standing for "above HDR_HIGHEST" */

/* Series numbers: block series by device slot, metric and op, then the
 * redo and syscall series. */
#define N_OPS 5
#define N_BLOCK_METRICS 3 /* D2C, Q2D, BYTES */
#define MAX_DEVS 16
#define S_REDO (MAX_DEVS * N_BLOCK_METRICS * N_OPS) /* + 0 read, + 1 write */
#define S_SYSW (S_REDO + 2)
#define S_FSYNC (S_SYSW + 1)
#define S_FDSYNC (S_SYSW + 2)
#define N_SERIES (S_SYSW + 3)

static __always_inline u32 block_series(u32 slot, u32 metric, u32 op)
{
	return (slot * N_BLOCK_METRICS + metric) * N_OPS + op;
}

/* A series' dense index space: hdr_index's values up to that of 1 h, and
 * one more for overflow, in pages of PAGE_W buckets. */
#define HDR_MAX_INDEX 33420 /* hdr_index(HDR_HIGHEST) */
#define DENSE_OVERFLOW (HDR_MAX_INDEX + 1)
#define PAGE_SHIFT 8
#define PAGE_W (1 << PAGE_SHIFT)
#define PAGES_PER_SERIES ((DENSE_OVERFLOW + PAGE_W) >> PAGE_SHIFT) /* 131 */

/* Counters of what could not be counted, and the page pool's use, in map
 * "stats". */
enum stat {
	ST_HIST_FULL = 0,  /* a value found the page pool used up */
	ST_START_FULL = 1, /* an issue or insert time found its map full */
	ST_DEVS_FULL = 2,  /* a request on a disk past MAX_DEVS (every-disk mode) */
	ST_PAGES = 3,      /* pages handed out on this CPU (page 0 is never used) */
	ST_MAX = 4,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ST_MAX);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

/* A series' directory: the page of each range of PAGE_W buckets, 0 for
 * none yet. Only one program records a series (D2C at completion, Q2D,
 * BYTES and REDO at issue, syscall series at exit), and a program never
 * nests in itself on a CPU, so a directory entry has one writer. */
struct dir {
	u16 page[PAGES_PER_SERIES + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, N_SERIES);
	__type(key, u32);
	__type(value, struct dir);
} dirs SEC(".maps");

/* A page: its owner (series * PAGES_PER_SERIES + range + 1; 0 while being
 * handed out, which user space skips until the next read) and the counts.
 * Counts wrap at 2^32; user space takes increases modulo 2^32, once per
 * interval. */
struct page {
	u32 owner;
	u32 pad;
	u32 c[PAGE_W];
};

/* The pool's size, set with the map's before load (user space sizes it by
 * the CPU count). */
volatile const u32 n_pages = 1;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct page);
} pages SEC(".maps");

/* One redo log's extents on one device, in 512-byte sectors [start, end). */
#define MAX_EXTENTS 64
struct extents {
	u32 dev;
	u32 n;
	u64 start[MAX_EXTENTS];
	u64 end[MAX_EXTENTS];
};

/* A request in flight: its insert and issue times (0: not yet), and the
 * device slot and op found at issue, so a completion reads nothing more. */
struct inflight {
	u64 inserted;
	u64 issued;
	u32 slot; /* the device's slot */
	u8 op;
	u8 pad[3];
};

/* Requests in flight, first in a direct-mapped table indexed by the
 * request's address (array lookups are inlined: no helper call, no lock;
 * a hash update and delete per request cost ~0.5 us on a loaded VM), and in
 * a shared hash when another live request holds the slot. A completion may
 * run on another CPU: it happens after the issue that stored the slot. */
#define SLOTS (1 << 16)
struct slot {
	u64 rq;  /* the request's address, 0 when free */
	u64 gen; /* the phase that stored it: slots of another phase are free */
	struct inflight f;
};

/* The current phase's generation, set by user space at each attach, so
 * that no slot needs clearing between phases. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} generation SEC(".maps");

static __always_inline u64 current_gen(void)
{
	u32 zero = 0;
	u64 *g = bpf_map_lookup_elem(&generation, &zero);
	return g ? *g : 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, u32);
	__type(value, struct slot);
} slots SEC(".maps");

/* Requests in flight whose slot was taken, by address. Not preallocated
 * (BPF_F_NO_PREALLOC): it holds the few requests whose slot another one
 * held, and a preallocated table of 16,384 entries was 1.5 MiB of kernel
 * memory zeroed at every load (~0.6 ms of start-up CPU) for entries almost
 * never used; an entry is allocated when one is stored. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, u64);
	__type(value, struct inflight);
} inflight SEC(".maps");

/* Processes of interest by tgid, set by user space: globals, read with
 * plain loads, where a hash lookup cost every write(2) on the host ~300 ns
 * on a loaded VM. Two lists: user space fills the one not in use, then
 * switches tgid_active, so no program sees a list half written. */
#define MAX_TGIDS 64
u32 tgid_active = 0;
u32 n_tgids[2] = {};
u32 tgid_list[2][MAX_TGIDS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct extents);
} redo SEC(".maps");

/* Set before load: the traced disks (none: every disk), whose index is
 * their slot. */
volatile const u32 n_devs = 0;
volatile const u32 devs[MAX_DEVS] = {};
/* Every-disk mode: the disks seen so far, by slot (0: free), read by user
 * space to name the series. */
u32 dyn_devs[MAX_DEVS] = {};
#define MAX_COMMS 4
volatile const u32 n_comms = 0;
volatile const char comms[MAX_COMMS][16] = {};

/* ilog2 of v > 0, without loops. */
static __always_inline u32 ilog2(u64 v)
{
	u32 r = 0, s;
	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}

/* hdr_index is hdrhistogram's counts index of v for package hist's
 * geometry: bucket b = ilog2(v) - 10 (0 below 2048), index b*1024 + v>>b. */
static __always_inline u32 hdr_index(u64 v)
{
	if (v > HDR_HIGHEST)
		return HDR_OVERFLOW;
	if (v < (2ULL << HDR_SUB_MAGNITUDE))
		return (u32)v;
	u32 b = ilog2(v) - HDR_SUB_MAGNITUDE;
	return (b << HDR_SUB_MAGNITUDE) + (u32)(v >> b);
}

static __always_inline void bump(u32 i)
{
	u64 *c = bpf_map_lookup_elem(&stats, &i);
	if (c)
		__sync_fetch_and_add(c, 1);
}

/* new_page hands out a page of this CPU's pool to owner, or returns 0. The
 * counter is shared by every program on the CPU: an interrupt's program
 * may take one in between, hence the atomic add. */
static __always_inline u32 new_page(u32 owner)
{
	u32 k = ST_PAGES;
	u64 *next = bpf_map_lookup_elem(&stats, &k);
	if (!next)
		return 0;
	if (*next + 1 >= n_pages) {
		bump(ST_HIST_FULL);
		return 0;
	}
	u32 pg = (u32)__sync_fetch_and_add(next, 1) + 1;
	struct page *p = pg < n_pages ? bpf_map_lookup_elem(&pages, &pg) : NULL;
	if (!p) {
		bump(ST_HIST_FULL);
		return 0;
	}
	p->owner = owner;
	return pg;
}

/* record counts v in series s.
 *
 * A global (non-static, not inlined) function: the verifier checks it once,
 * for any s and v, and each call as a call. Inlined, it was walked again
 * on every path into each call site, and block_rq_issue has three of them
 * behind dev_slot's loop, which leaves one verifier state per disk slot:
 * 65,805 instructions processed for block_rq_issue and 72,230 for all the
 * programs, against 4,769 and 9,176 now (the verifier's count, kernel 6.18,
 * BenchmarkLoad), the verifier having been 19-30% of `writepath run`'s
 * start-up CPU. The call costs a few ns a value (BenchmarkTraceCost's
 * bpf-ns/req moved by less than its noise). Returns 0: a global function
 * returns a scalar. */
__noinline int record(u32 s, u64 v)
{
	u32 di = hdr_index(v);
	if (di > HDR_MAX_INDEX)
		di = DENSE_OVERFLOW;
	struct dir *d = bpf_map_lookup_elem(&dirs, &s);
	if (!d)
		return 0;
	u32 r = di >> PAGE_SHIFT;
	if (r >= PAGES_PER_SERIES)
		return 0;
	u32 pg = d->page[r];
	if (!pg) {
		pg = new_page(s * PAGES_PER_SERIES + r + 1);
		if (!pg)
			return 0;
		d->page[r] = (u16)pg;
	}
	/* A plain increment: the count is this CPU's and its series has one
	 * writer (see struct dir), so nothing can come in between. */
	struct page *p = bpf_map_lookup_elem(&pages, &pg);
	if (p)
		p->c[di & (PAGE_W - 1)] += 1;
	return 0;
}

/* The tp_btf programs get the kernel's own struct request pointer: fields
 * are read with direct (fault-checked) loads, relocated by CO-RE, not with
 * probe-read helper calls. */
static __always_inline u32 rq_dev(struct request *rq)
{
	struct gendisk *disk = rq->q->disk;
	if (!disk)
		return 0;
	return ((u32)disk->major << MINORBITS) | (u32)disk->first_minor;
}

/* dev_slot is the traced disk's slot, or -1 for a disk not traced. */
static __always_inline int dev_slot(u32 dev)
{
	if (!dev)
		return -1;
	if (n_devs) {
		for (u32 i = 0; i < MAX_DEVS; i++) {
			if (i >= n_devs)
				break;
			if (devs[i] == dev)
				return i;
		}
		return -1;
	}
	for (u32 i = 0; i < MAX_DEVS; i++) {
		u32 d = dyn_devs[i];
		if (d == dev)
			return i;
		if (d == 0) {
			u32 old = __sync_val_compare_and_swap(&dyn_devs[i], 0, dev);
			if (old == 0 || old == dev)
				return i;
		}
	}
	bump(ST_DEVS_FULL);
	return -1;
}

static __always_inline u8 rq_op(struct request *rq)
{
	u32 op = rq->cmd_flags & REQ_OP_MASK;
	return op <= OP_DISCARD ? (u8)op : OP_OTHER;
}

/* redo_overlap records a read or write that lands on the redo extents. */
static __always_inline void redo_overlap(u32 dev, u8 op, u64 sector, u32 bytes)
{
	u32 zero = 0;
	struct extents *e = bpf_map_lookup_elem(&redo, &zero);
	if (!e || e->dev != dev || e->n == 0)
		return;
	u64 end = sector + ((bytes + 511) >> 9);
	if (bytes == 0)
		end = sector + 1;
	for (u32 i = 0; i < MAX_EXTENTS; i++) {
		if (i >= e->n)
			break;
		if (sector < e->end[i] && end > e->start[i]) {
			record(S_REDO + op, bytes);
			return;
		}
	}
}

/* slot_of is the table slot of a request: requests of a tag set are
 * allocated side by side, a few hundred bytes apart. */
static __always_inline struct slot *slot_of(u64 rq)
{
	u32 i = (u32)(rq >> 8) & (SLOTS - 1);
	return bpf_map_lookup_elem(&slots, &i);
}

/* find returns the in-flight entry of rq, or NULL. */
static __always_inline struct inflight *find(u64 rq, struct slot *s)
{
	if (s && s->rq == rq && s->gen == current_gen())
		return &s->f;
	return bpf_map_lookup_elem(&inflight, &rq);
}

/* start returns a fresh entry for rq: its slot when free (or its own),
 * else one in the hash. */
static __always_inline struct inflight *start(u64 rq, struct slot *s)
{
	u64 gen = current_gen();
	if (s && (s->rq == 0 || s->rq == rq || s->gen != gen)) {
		s->rq = rq;
		s->gen = gen;
		__builtin_memset(&s->f, 0, sizeof(s->f));
		return &s->f;
	}
	struct inflight n = {};
	if (bpf_map_update_elem(&inflight, &rq, &n, BPF_ANY)) {
		bump(ST_START_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&inflight, &rq);
}

/* forget drops rq's entry wherever it is. */
static __always_inline void forget(u64 rq, struct slot *s)
{
	if (s && s->rq == rq && s->gen == current_gen())
		s->rq = 0;
	else
		bpf_map_delete_elem(&inflight, &rq);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(block_rq_insert, struct request *rq)
{
	if (dev_slot(rq_dev(rq)) < 0)
		return 0;
	u64 key = (u64)rq;
	struct inflight *f = start(key, slot_of(key));
	if (f)
		f->inserted = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue, struct request *rq)
{
	u32 dev = rq_dev(rq);
	int ds = dev_slot(dev);
	if (ds < 0)
		return 0;
	u32 ss = (u32)ds;
	u64 now = bpf_ktime_get_ns();
	u64 key = (u64)rq;
	u8 op = rq_op(rq);
	u32 bytes = rq->__data_len;
	struct slot *s = slot_of(key);
	struct inflight *f = find(key, s);
	if (f) {
		/* Inserted (or issued before and requeued): update in place. */
		if (f->inserted && now >= f->inserted)
			record(block_series(ss, M_Q2D, op), now - f->inserted);
		f->inserted = 0;
	} else {
		f = start(key, s);
	}
	if (f) {
		f->issued = now;
		f->slot = ss;
		f->op = op;
	}
	record(block_series(ss, M_BYTES, op), bytes);
	if (op == OP_READ || op == OP_WRITE)
		redo_overlap(dev, op, rq->__sector, bytes);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	u64 key = (u64)rq;
	struct slot *s = slot_of(key);
	struct inflight *f = find(key, s);
	if (!f)
		return 0;
	u64 now = bpf_ktime_get_ns();
	if (f->issued && now >= f->issued && f->slot < MAX_DEVS && f->op < N_OPS)
		record(block_series(f->slot, M_D2C, f->op), now - f->issued);
	forget(key, s);
	return 0;
}

/* A requeued request is issued again later: its first issue does not count. */
SEC("tp_btf/block_rq_requeue")
int BPF_PROG(block_rq_requeue, struct request *rq)
{
	u64 key = (u64)rq;
	forget(key, slot_of(key));
	return 0;
}

/* A request merged into another is freed without being issued. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(block_rq_merge, struct request *rq)
{
	u64 key = (u64)rq;
	forget(key, slot_of(key));
	return 0;
}

/* interesting reports whether the current process is one of interest: its
 * tgid is in tgid_list, or its group leader's name is one of comms (read
 * with direct loads through the task's BTF pointer, no probe-read). */
static __always_inline bool interesting(void)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	u32 a = tgid_active & 1;
	u32 n = n_tgids[a];
	for (u32 i = 0; i < MAX_TGIDS; i++) {
		if (i >= n)
			break;
		if (tgid_list[a][i] == tgid)
			return true;
	}
	if (n_comms == 0)
		return false;
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *leader = t->group_leader;
	if (!leader)
		return false;
	for (u32 c = 0; c < MAX_COMMS; c++) {
		if (c >= n_comms)
			break;
		bool same = true;
		for (u32 i = 0; i < 16; i++) {
			char ch = leader->comm[i];
			if (ch != comms[c][i]) {
				same = false;
				break;
			}
			if (ch == 0)
				break;
		}
		if (same)
			return true;
	}
	return false;
}

/* Syscall numbers of this architecture, set before load. */
volatile const long nr_write = -1, nr_pwrite64 = -1, nr_writev = -1, nr_pwritev = -1, nr_pwritev2 = -1;
volatile const long nr_fsync = -1, nr_fdatasync = -1;

/* A traced syscall in progress on a thread. */
struct pending {
	u64 ts;
	u32 metric;
	u32 pad;
};

/* Traced syscalls in progress by thread id: one entry per thread of the
 * processes of interest inside a write or fsync at that moment. Not
 * preallocated, for the reason of inflight's (1.4 MiB, ~0.6 ms a load);
 * the store and delete per traced syscall cost no more for it
 * (BenchmarkSyscallCost/followed). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, u32);
	__type(value, struct pending);
} syscalls SEC(".maps");

static __always_inline int syscall_metric(long id)
{
	if (id == nr_fsync)
		return M_FSYNC;
	if (id == nr_fdatasync)
		return M_FDSYNC;
	if (id == nr_write || id == nr_pwrite64 || id == nr_writev || id == nr_pwritev || id == nr_pwritev2)
		return M_SYSW;
	return -1;
}

/* The raw syscall tracepoints: BPF trampolines (fentry on the syscall entry
 * points) would spare other syscalls, but not every kernel lets them load.
 * A syscall of interest is remembered at entry with its metric and time,
 * and counted at exit. */
SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	int metric = syscall_metric(id);
	if (metric < 0 || !interesting())
		return 0;
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending p = {.ts = bpf_ktime_get_ns(), .metric = (u32)metric};
	if (bpf_map_update_elem(&syscalls, &tid, &p, BPF_ANY))
		bump(ST_START_FULL);
	return 0;
}

/* exit_nr is the number of the syscall exiting, -2 where pt_regs has no
 * field for it (then every exit looks for a pending entry). */
static __always_inline long exit_nr(struct pt_regs *regs)
{
	if (bpf_core_field_exists(regs->orig_ax))
		return (long)regs->orig_ax;
	return -2;
}

/* Most syscalls on the host are of no interest: their number and process
 * are checked before the pending table (a hash lookup, ~200 ns loaded) is. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	long nr = exit_nr(regs);
	if (nr != -2 && syscall_metric(nr) < 0)
		return 0;
	if (!interesting())
		return 0;
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&syscalls, &tid);
	if (!p)
		return 0;
	u64 now = bpf_ktime_get_ns();
	if (p->metric == M_SYSW) {
		if (ret > 0)
			record(S_SYSW, (u64)ret);
	} else if (now >= p->ts) {
		record(p->metric == M_FSYNC ? S_FSYNC : S_FDSYNC, now - p->ts);
	}
	bpf_map_delete_elem(&syscalls, &tid);
	return 0;
}

/* hdr_index_probe lets a test run hdr_index in the kernel (BPF_PROG_TEST_RUN)
 * on the values it puts into probe_in, and compare with package hist. */
#define PROBE_N 64
struct probe {
	u64 in[PROBE_N];
	u32 out[PROBE_N];
	u32 series; /* record_probe: the series, and how many of in */
	u32 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct probe);
} probe SEC(".maps");

SEC("syscall")
int hdr_index_probe(void *ctx)
{
	u32 zero = 0;
	struct probe *p = bpf_map_lookup_elem(&probe, &zero);
	if (!p)
		return 1;
	for (u32 i = 0; i < PROBE_N; i++)
		p->out[i] = hdr_index(p->in[i]);
	return 0;
}

/* record_probe records the first n values of probe_in into a series, as
 * the programs do: tests and benchmarks fill the pages through it. */
SEC("syscall")
int record_probe(void *ctx)
{
	u32 zero = 0;
	struct probe *p = bpf_map_lookup_elem(&probe, &zero);
	if (!p)
		return 1;
	u32 n = p->n, s = p->series;
	for (u32 i = 0; i < PROBE_N; i++) {
		if (i >= n)
			break;
		record(s, p->in[i]);
	}
	return 0;
}
