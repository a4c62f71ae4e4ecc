/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The few kernel types trace.bpf.c reads, declared for CO-RE: the fields
 * are relocated against the running kernel's BTF (/sys/kernel/btf/vmlinux)
 * at load time, so only the names matter here, not the layout. This stands
 * in for a generated vmlinux.h (megabytes, one kernel's layout).
 */
#ifndef WP_TYPES_H
#define WP_TYPES_H

typedef unsigned char __u8;
typedef short int __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;
typedef __u32 __wsum;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;
typedef _Bool bool;
#define true 1
#define false 0

/* uapi/linux/bpf.h: the map types and flags used here. */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
};
#ifndef NULL
#define NULL ((void *)0)
#endif
enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};
#define BPF_F_NO_PREALLOC (1U << 0)
#define EEXIST 17

/* linux/blk_types.h: REQ_OP_MASK of cmd_flags. */
#define REQ_OP_BITS 8
#define REQ_OP_MASK ((1 << REQ_OP_BITS) - 1)
#define MINORBITS 20

struct gendisk {
	int major;
	int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	unsigned int __data_len;
	u64 __sector;
} __attribute__((preserve_access_index));

struct task_struct {
	struct task_struct *group_leader;
	char comm[16];
} __attribute__((preserve_access_index));

/* x86-64's saved syscall number; other architectures name it otherwise
 * (bpf_core_field_exists tells). */
struct pt_regs {
	unsigned long orig_ax;
} __attribute__((preserve_access_index));

#endif
